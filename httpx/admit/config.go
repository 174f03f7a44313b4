package admit

import (
	"fmt"
	"time"
)

// QueueConfig is the work-queue knob group of a role section (queue_capacity
// and queue_timeout, docs/storage.md §7, docs/index.md §12), squashed into the
// section's config struct (`koanf:",squash"`) so every role that has a work
// queue spells and checks the two keys the same way.
type QueueConfig struct {
	// QueueCapacity bounds the requests admitted and not yet finished
	// (waiting for a worker slot or holding one); at least 1.
	QueueCapacity int `koanf:"queue_capacity" help:"work queue size; full → 429 busy"`
	// QueueTimeout is the longest wait for a worker slot; positive.
	QueueTimeout time.Duration `koanf:"queue_timeout" help:"longest wait for a worker slot before 429 busy"`
}

// Validate checks both keys; an error names "<section>.<key>".
func (c QueueConfig) Validate(section string) error {
	switch {
	case c.QueueCapacity < 1:
		return fmt.Errorf("%s.queue_capacity: must be at least 1, got %d", section, c.QueueCapacity)
	case c.QueueTimeout <= 0:
		return fmt.Errorf("%s.queue_timeout: must be positive", section)
	}
	return nil
}
