package httpcache

import "testing"

func TestServeStaleOnFailure(t *testing.T) {
	tests := []struct {
		name        string
		respH       []string
		reqH        []string
		invalidated bool
		nilStored   bool
		failure     Failure
		now         float64
		want        bool
	}{
		{name: "RFC5861 4 stale-if-error on 500", respH: []string{"Cache-Control", "max-age=0, stale-if-error=3600"}, failure: FailureStatus, now: 10, want: true},
		{name: "RFC5861 4 stale-if-error on unreachable", respH: []string{"Cache-Control", "max-age=2, stale-if-error=60"}, failure: FailureUnreachable, now: 50, want: true},
		{name: "RFC5861 4 stale-if-error elapsed", respH: []string{"Cache-Control", "max-age=0, stale-if-error=1"}, failure: FailureStatus, now: 3, want: false},
		{name: "RFC5861 4 request stale-if-error", respH: []string{"Cache-Control", "max-age=0"}, reqH: []string{"Cache-Control", "stale-if-error=3600"}, failure: FailureStatus, now: 10, want: true},
		{name: "RFC5861 4 request stale-if-error elapsed", respH: []string{"Cache-Control", "max-age=0"}, reqH: []string{"Cache-Control", "stale-if-error=1"}, failure: FailureStatus, now: 3, want: false},
		{name: "spec 7.4 error status without stale-if-error", respH: []string{"Cache-Control", "max-age=2"}, failure: FailureStatus, now: 5, want: false},
		{name: "spec 7.4 stale_if_unreachable window", respH: []string{"Cache-Control", "max-age=2"}, failure: FailureUnreachable, now: 5, want: true},
		{name: "spec 7.4 stale_if_unreachable elapsed", respH: []string{"Cache-Control", "max-age=2"}, failure: FailureUnreachable, now: 63, want: false},
		{name: "spec 7.4 fresh entry validated on request no-cache", respH: []string{"Cache-Control", "max-age=100"}, reqH: []string{"Cache-Control", "no-cache"}, failure: FailureUnreachable, now: 5, want: true},
		{name: "RFC9111 5.2.2.2 must-revalidate forbids", respH: []string{"Cache-Control", "max-age=2, must-revalidate, stale-if-error=60"}, failure: FailureUnreachable, now: 5, want: false},
		{name: "RFC9111 5.2.2.8 proxy-revalidate forbids", respH: []string{"Cache-Control", "max-age=2, proxy-revalidate"}, failure: FailureUnreachable, now: 5, want: false},
		{name: "RFC9111 5.2.2.4 no-cache forbids", respH: []string{"Cache-Control", "max-age=2, no-cache"}, failure: FailureUnreachable, now: 5, want: false},
		{name: "RFC9111 5.2.2.10 s-maxage forbids", respH: []string{"Cache-Control", "s-maxage=2"}, failure: FailureUnreachable, now: 5, want: false},
		{name: "RFC9111 4.4 invalidated entry", respH: []string{"Cache-Control", "max-age=2, stale-if-error=60"}, invalidated: true, failure: FailureStatus, now: 5, want: false},
		{name: "RFC9111 4 nothing stored", nilStored: true, failure: FailureUnreachable, want: false},
		{name: "spec 10 request stale-if-error ignored when configured", respH: []string{"Cache-Control", "max-age=0"}, reqH: []string{"Cache-Control", "stale-if-error=3600"}, failure: FailureStatus, now: 10, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st *Stored
			if !tc.nilStored {
				st = stored(hdr(tc.respH...))
				st.Invalidated = tc.invalidated
			}
			p := DefaultPolicy()
			p.IgnoreRequestDirectives = tc.name == "spec 10 request stale-if-error ignored when configured"
			if got := ServeStaleOnFailure(getReq(hdr(tc.reqH...)), st, at(tc.now), tc.failure, p); got != tc.want {
				t.Errorf("ServeStaleOnFailure = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsErrorStatus(t *testing.T) {
	for code, want := range map[int]bool{500: true, 502: true, 503: true, 504: true, 501: false, 404: false, 200: false, 599: false} {
		if IsErrorStatus(code) != want {
			t.Errorf("RFC5861 4: %d", code)
		}
	}
}
