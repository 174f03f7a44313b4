package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPadBodySizes(t *testing.T) {
	for _, size := range []int{minSize, minSize + 1, 600, maxSize} {
		b, err := PadBody(size)
		if err != nil || len(b) != size || !json.Valid(b) {
			t.Errorf("PadBody(%d) = %d bytes, valid %v, %v", size, len(b), json.Valid(b), err)
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"size too small", []string{"-size", "9"}},
		{"size negative", []string{"-size", "-1"}},
		{"size too large", []string{"-size", "1048577"}},
		{"size not a number", []string{"-size", "x"}},
		{"missing body file", []string{"-body-file", filepath.Join(dir, "nope")}},
		{"empty body file", []string{"-body-file", empty}},
		{"unknown flag", []string{"-nope"}},
		{"extra argument", []string{"extra"}},
		{"bad listen address", []string{"-listen", "nonsense"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(tc.args, io.Discard); err == nil {
				t.Errorf("run(%q) = nil, want an error", tc.args)
			}
		})
	}
}

func TestHandlerServesBody(t *testing.T) {
	body := []byte(`{"key":"x"}`)
	rec := httptest.NewRecorder()
	Handler(body).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/resolve/anything", nil))
	if rec.Code != 200 || rec.Body.String() != string(body) ||
		rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Content-Length") != "11" {
		t.Fatalf("got %d %v %q", rec.Code, rec.Header(), rec.Body.String())
	}
}

func TestLoadBodyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(p, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := loadBody(p, 0)
	if err != nil || string(b) != `{"a":1}` {
		t.Fatalf("loadBody = %q, %v", b, err)
	}
}
