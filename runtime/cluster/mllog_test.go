package cluster

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestParseLogLine(t *testing.T) {
	cases := []struct {
		line  string
		level zerolog.Level
		msg   string
	}{
		{"[DEBUG] memberlist: Stream connection from=1.2.3.4:5\n", zerolog.DebugLevel, "Stream connection from=1.2.3.4:5"},
		{"[INFO] memberlist: Marking b as failed", zerolog.InfoLevel, "Marking b as failed"},
		{"[WARN] memberlist: Refuting a dead message", zerolog.WarnLevel, "Refuting a dead message"},
		{"[ERR] memberlist: Conflicting address for a", zerolog.ErrorLevel, "Conflicting address for a"},
		{"[ERROR] memberlist: x", zerolog.ErrorLevel, "x"},
		{"[TRACE] memberlist: y", zerolog.InfoLevel, "[TRACE] memberlist: y"},
		{"no level at all", zerolog.InfoLevel, "no level at all"},
		{"[unterminated", zerolog.InfoLevel, "[unterminated"},
		{"", zerolog.InfoLevel, ""},
	}
	for _, tc := range cases {
		level, msg := parseLogLine(tc.line)
		if level != tc.level || msg != tc.msg {
			t.Errorf("parseLogLine(%q) = %v, %q; want %v, %q", tc.line, level, msg, tc.level, tc.msg)
		}
	}
}

func TestMemberlistLogger(t *testing.T) {
	var buf bytes.Buffer
	l := memberlistLogger(zerolog.New(&buf))
	l.Printf("[WARN] memberlist: hello %d", 7)
	got := buf.String()
	for _, want := range []string{`"level":"warn"`, `"component":"memberlist"`, `"message":"hello 7"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("log line %s lacks %s", got, want)
		}
	}
}
