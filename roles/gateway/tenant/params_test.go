package tenant

import (
	"errors"
	"math"
	"testing"
)

func TestParamsValidate(t *testing.T) {
	bad := []struct {
		name string
		p    Params
	}{
		{"negative rps", Params{RPS: -1, Weight: 1}},
		{"NaN rps", Params{RPS: math.NaN(), Weight: 1}},
		{"infinite rps", Params{RPS: math.Inf(1), Weight: 1}},
		{"negative burst", Params{RPS: 1, Burst: -1, Weight: 1}},
		{"zero weight", Params{RPS: 1}},
		{"heavy weight", Params{RPS: 1, Weight: MaxWeight + 1}},
		{"negative bytes", Params{RPS: 1, Weight: 1, MaxBytesPerS: -1}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if err := c.p.Validate(); !errors.Is(err, ErrParams) {
				t.Fatalf("Validate(%+v) = %v, want ErrParams", c.p, err)
			}
		})
	}
	if err := (Params{RPS: 0, Weight: MaxWeight}).Validate(); err != nil {
		t.Fatalf("suspended params: %v", err)
	}
}

func TestEffectiveBurst(t *testing.T) {
	cases := []struct {
		p    Params
		want int
	}{
		{Params{RPS: 10, Burst: 3}, 3},
		{Params{RPS: 10}, 10},
		{Params{RPS: 2.1}, 3},
		{Params{RPS: 0.2}, 1},
		{Params{RPS: 1e300}, maxAutoBurst},
	}
	for _, c := range cases {
		if got := c.p.EffectiveBurst(); got != c.want {
			t.Errorf("EffectiveBurst(%+v) = %d, want %d", c.p, got, c.want)
		}
	}
}
