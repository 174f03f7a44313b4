package mbtiles

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestTMSFlip reads every stored tile through its XYZ address, for a flat
// table and for a view-based schema.
func TestTMSFlip(t *testing.T) {
	for _, name := range []string{"world_cities.mbtiles", "geography-class-png.mbtiles", "zoomed_world_cities.mbtiles"} {
		t.Run(name, func(t *testing.T) {
			p := openT(t, fixture(t, name), Options{})
			for _, r := range readRows(t, p.Path()) {
				got, found, err := p.Tile(context.Background(), uint32(r.z), uint32(r.x), r.xyzY())
				if err != nil || !found || !bytes.Equal(got, r.data) {
					t.Fatalf("Tile(%d/%d/%d) = %d bytes, %v, %v; want row %d", r.z, r.x, r.xyzY(), len(got), found, err, r.tmsY)
				}
			}
		})
	}
}

// TestKnownTiles pins tiles whose TMS rows are known from the files.
func TestKnownTiles(t *testing.T) {
	p := openT(t, fixture(t, "world_cities.mbtiles"), Options{})
	cases := []struct {
		z, x, y uint32
		length  int
	}{
		{0, 0, 0, 1107},
		{1, 0, 0, 426}, // TMS row 1
		{1, 0, 1, 160}, // TMS row 0
	}
	for _, c := range cases {
		data, found, err := p.Tile(context.Background(), c.z, c.x, c.y)
		if err != nil || !found || len(data) != c.length || EncodingOf(data) != EncodingGzip {
			t.Errorf("Tile(%d/%d/%d) = %d bytes, %v, %v; want %d gzip bytes", c.z, c.x, c.y, len(data), found, err, c.length)
		}
	}
	g := openT(t, fixture(t, "geography-class-png.mbtiles"), Options{})
	// geography-class holds TMS (1,0,0) = 13843 bytes and (1,0,1) = 21130.
	for _, c := range []struct {
		y      uint32
		length int
	}{{1, 13843}, {0, 21130}} {
		data, found, err := g.Tile(context.Background(), 1, 0, c.y)
		if err != nil || !found || len(data) != c.length {
			t.Errorf("geography Tile(1/0/%d) = %d bytes, %v, %v; want %d", c.y, len(data), found, err, c.length)
		}
	}
}

func TestTileBadInput(t *testing.T) {
	p := openT(t, fixture(t, "world_cities.mbtiles"), Options{})
	cases := []struct {
		name    string
		z, x, y uint32
		want    error
		found   bool
	}{
		{"z32", 32, 0, 0, ErrInvalidCoord, false},
		{"x too big", 3, 8, 0, ErrInvalidCoord, false},
		{"y too big", 3, 0, 8, ErrInvalidCoord, false},
		{"z0 x1", 0, 1, 0, ErrInvalidCoord, false},
		{"z31 max corner, absent", 31, 1<<31 - 1, 1<<31 - 1, nil, false},
		{"beyond max zoom, absent", 7, 0, 0, nil, false},
		{"inside range, absent", 6, 0, 0, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, found, err := p.Tile(context.Background(), c.z, c.x, c.y)
			if !errors.Is(err, c.want) || found != c.found {
				t.Fatalf("got %v, %v; want %v, %v", found, err, c.found, c.want)
			}
		})
	}
}

func TestTileContextAndClose(t *testing.T) {
	p, err := Open(context.Background(), fixture(t, "world_cities.mbtiles"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := p.Tile(ctx, 0, 0, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Tile with canceled ctx: %v", err)
	}
	if err := p.VerifyFull(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("VerifyFull with canceled ctx: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := p.Tile(context.Background(), 0, 0, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Tile after Close: %v", err)
	}
	if _, err := p.Stats(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Stats after Close: %v", err)
	}
	if err := p.VerifyFull(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("VerifyFull after Close: %v", err)
	}
}

// TestConcurrentReads has many goroutines read every tile in random order
// (run with -race), more than the pool has connections.
func TestConcurrentReads(t *testing.T) {
	p := openT(t, fixture(t, "world_cities.mbtiles"), Options{MaxConns: 4})
	rows := readRows(t, p.Path())
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for _, i := range rng.Perm(len(rows)) {
				r := rows[i]
				data, found, err := p.Tile(context.Background(), uint32(r.z), uint32(r.x), r.xyzY())
				if err != nil || !found || !bytes.Equal(data, r.data) {
					errs <- errors.Join(err, errors.New("wrong tile"))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestCloseDuringReads closes the pack while readers are running: every
// read either succeeds or reports ErrClosed.
func TestCloseDuringReads(t *testing.T) {
	p, err := Open(context.Background(), fixture(t, "world_cities.mbtiles"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			<-start
			for range 50 {
				_, _, err := p.Tile(context.Background(), 0, 0, 0)
				if err != nil && !errors.Is(err, ErrClosed) {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
