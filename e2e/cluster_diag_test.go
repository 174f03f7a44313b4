package e2e

import (
	"fmt"
	"net/http"
	"strings"
)

// whereIs describes, for a failure message, which running nodes hold id
// (HEAD on their storage) and what each one's index answers for its
// providers: from its own store (?local=1), with a full lookup bypassing
// its cache (Cache-Control: no-cache; this refreshes the cache) and then a
// plain lookup.
func (c *testCluster) whereIs(id string) string {
	var parts []string
	for _, n := range c.running() {
		h, err := clReq(clObserveLimit, http.MethodHead, n.storageBase()+"/o/"+id, nil, nil)
		p, perr := clGet("http://" + n.index + "/providers/" + id + "?local=1")
		f, ferr := clReq(clObserveLimit, http.MethodGet, "http://"+n.index+"/providers/"+id, hdr("Cache-Control", "no-cache"), nil)
		d, derr := clGet("http://" + n.index + "/providers/" + id)
		parts = append(parts, fmt.Sprintf("%s: HEAD %d %v, local providers %d %.300s %v, full lookup (no-cache) %d %.300s %v, lookup %d %.300s %v",
			n.id, h.status, err, p.status, p.body, perr, f.status, f.body, ferr, d.status, d.body, derr))
	}
	return strings.Join(parts, "; ")
}
