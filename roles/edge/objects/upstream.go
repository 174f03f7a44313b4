package objects

import (
	"time"

	"github.com/ronhq/ron/store/verified/vfetch"
)

// userAgent identifies the edge's upstream requests.
const userAgent = "ron-edge"

// req is the requester of src's requests: src's client (nil:
// http.DefaultClient), timeout to the response headers and then per 64 KiB,
// no header of the client's (only Accept-Encoding: identity, the User-Agent,
// Range and what src.Prepare adds), timeouts counted in
// ron_io_timeouts_total{op="fill"}, and the sizes proven so far (an
// outboard stating another size for a proven id is refused at once).
func (o *Objects) req(src *Source, timeout time.Duration) *vfetch.Requester {
	return &vfetch.Requester{HTTP: src.Client, Timeout: timeout, UserAgent: userAgent, Prepare: src.Prepare,
		OnTimeout: o.met.timeouts.Inc, Sizes: o.sizes}
}
