package cluster

import (
	"log"
	"strings"

	"github.com/rs/zerolog"
)

// memberlistLogger adapts base to the *log.Logger memberlist writes to. Its
// lines look like "[WARN] memberlist: text"; the bracketed level becomes the
// zerolog level (DEBUG, INFO, WARN, ERR/ERROR; anything else is info) and
// the "memberlist: " prefix is dropped.
func memberlistLogger(base zerolog.Logger) *log.Logger {
	return log.New(levelWriter{log: base.With().Str("component", "memberlist").Logger()}, "", 0)
}

// levelWriter turns each written line into one zerolog event.
type levelWriter struct {
	log zerolog.Logger
}

func (w levelWriter) Write(p []byte) (int, error) {
	level, msg := parseLogLine(string(p))
	w.log.WithLevel(level).Msg(msg)
	return len(p), nil
}

var logLevels = map[string]zerolog.Level{
	"DEBUG": zerolog.DebugLevel,
	"INFO":  zerolog.InfoLevel,
	"WARN":  zerolog.WarnLevel,
	"ERR":   zerolog.ErrorLevel,
	"ERROR": zerolog.ErrorLevel,
}

// parseLogLine splits a memberlist log line into level and message.
func parseLogLine(line string) (zerolog.Level, string) {
	line = strings.TrimSpace(line)
	level := zerolog.InfoLevel
	if rest, ok := strings.CutPrefix(line, "["); ok {
		if tag, msg, ok := strings.Cut(rest, "]"); ok {
			if l, known := logLevels[tag]; known {
				level, line = l, strings.TrimSpace(msg)
			}
		}
	}
	return level, strings.TrimPrefix(line, "memberlist: ")
}
