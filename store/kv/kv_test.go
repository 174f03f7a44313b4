package kv_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store/kv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCheckPut(t *testing.T) {
	for _, tc := range []struct {
		key  []byte
		want error
	}{
		{nil, kv.ErrKeyRequired},
		{[]byte{}, kv.ErrKeyRequired},
		{[]byte{0}, nil},
		{make([]byte, kv.MaxKeySize), nil},
		{make([]byte, kv.MaxKeySize+1), kv.ErrKeyTooLarge},
	} {
		if err := kv.CheckPut(tc.key, nil); !errors.Is(err, tc.want) {
			t.Errorf("CheckPut(len %d) = %v, want %v", len(tc.key), err, tc.want)
		}
	}
}

func TestCheckBucketName(t *testing.T) {
	for name, want := range map[string]error{
		"":                                   kv.ErrBucketNameRequired,
		"names":                              nil,
		strings.Repeat("x", kv.MaxKeySize+1): kv.ErrKeyTooLarge,
	} {
		if err := kv.CheckBucketName(name); !errors.Is(err, want) {
			t.Errorf("CheckBucketName(len %d) = %v, want %v", len(name), err, want)
		}
	}
}
