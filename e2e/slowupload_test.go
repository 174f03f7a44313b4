package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestSlowUploadGetsItsReply sends an upload that keeps making progress for
// longer than the listener's 5 s write timeout: the reply must still arrive
// (the stall timeout, not the request's age, bounds an upload).
func TestSlowUploadGetsItsReply(t *testing.T) {
	n := startNode(t, nodeOpts{})
	tok := n.token("storage:write")
	body := randomBytes(7, 14*64<<10)
	pr, pw := io.Pipe()
	go func() { // trickle: one 64 KiB piece every 500 ms, about 7 s in all
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for off := 0; off < len(body); off += 64 << 10 {
			<-tick.C
			if _, err := pw.Write(body[off : off+64<<10]); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, n.url("/o"), pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("slow upload lost its reply: %v", err)
	}
	defer resp.Body.Close()
	var reply putReply
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("slow upload: %d %+v %v", resp.StatusCode, reply, err)
	}
	if reply.CID != idOf(body) {
		t.Fatalf("cid %s, want %s", reply.CID, idOf(body))
	}
}
