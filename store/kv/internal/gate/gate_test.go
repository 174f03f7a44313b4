package gate_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/internal/gate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCloseWaitsForActive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New()
		release, err := g.Enter(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		closed := make(chan bool, 1)
		go func() { closed <- g.Close() }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned with a transaction running")
		default:
		}
		if _, err := g.Enter(context.Background(), false); !errors.Is(err, kv.ErrClosed) {
			t.Errorf("Enter while closing = %v, want ErrClosed", err)
		}
		release()
		if !<-closed {
			t.Error("first Close reported false")
		}
		if g.Close() {
			t.Error("second Close reported true")
		}
	})
}

func TestWriterWaitsUnderCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate.New()
		release, err := g.Enter(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := g.Enter(ctx, true)
			got <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Errorf("waiting writer = %v, want Canceled", err)
		}
		release()
		release2, err := g.Enter(context.Background(), true)
		if err != nil {
			t.Fatalf("writer slot not released: %v", err)
		}
		release2()
		g.Close()
	})
}
