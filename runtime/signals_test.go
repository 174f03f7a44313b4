package runtime

import (
	"context"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestSecondSignalExitsWithCode3(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := testManager(nil, 3*time.Second)
		roles := addAll(m, &recorder{}, "storage")
		release := make(chan struct{})
		roles["storage"].stopBlock = release // the drain hangs
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		sigs := make(chan os.Signal)
		codes := make(chan int, 1)
		reloads := 0
		waited := make(chan struct{})
		go func() { // signal handler, owned by this test
			defer close(waited)
			WaitSignals(context.Background(), m, SignalOptions{
				Signals: sigs,
				Reload:  func() { reloads++ },
				Exit:    func(code int) { codes <- code },
			})
		}()
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		sigs <- syscall.SIGHUP
		synctest.Wait()
		if reloads != 1 || m.Draining() {
			t.Fatalf("SIGHUP: reloads=%d draining=%v", reloads, m.Draining())
		}
		sigs <- syscall.SIGTERM
		synctest.Wait()
		if !m.Draining() {
			t.Fatal("first SIGTERM did not start the drain")
		}
		start := time.Now()
		sigs <- syscall.SIGINT
		if code := <-codes; code != ExitSecondSignal {
			t.Fatalf("exit code %d", code)
		}
		if el := time.Since(start); el != 0 {
			t.Fatalf("second signal exit took %v, want at once", el)
		}
		<-waited
		close(release)
		<-done
	})
}

func TestWaitSignalsReturnsAfterShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := testManager(nil, 0)
		addAll(m, &recorder{}, "edge")
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		sigs := make(chan os.Signal)
		waited := make(chan struct{})
		go func() { // signal handler, owned by this test
			defer close(waited)
			WaitSignals(context.Background(), m, SignalOptions{Signals: sigs})
		}()
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		sigs <- syscall.SIGTERM
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		<-waited
	})
}
