package cosmos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// The protocol reads what it then compares and swaps, and decides from
// reads that an object is gone (a head no longer there lets a cleanup
// delete the parts it referred to): every read must see every write that
// finished before it, whichever client made it. On Cosmos DB that is the
// account's Strong consistency, or Bounded Staleness read in the write
// region (strong within it). Session consistency gives that only to reads
// carrying the session token of the write, which another client (another
// Helm process) never has; Consistent Prefix and Eventual never. A client
// cannot ask for more than the account's level (a request's
// ConsistencyLevel may only weaken it), so Open checks the account's level
// instead, from the account properties the SDK reads on its first request
// (the SDK does not expose them: accountTransport sees them go by). An
// account with several write regions is refused: ETag conditions hold
// within one write region only (conflicts between regions are resolved
// last writer wins, whatever the precondition).

// strongEnough are the account consistency levels the protocol accepts.
var strongEnough = map[string]bool{"strong": true, "boundedstaleness": true}

// accountInfo is what the account properties say, once seen.
type accountInfo struct {
	mu          sync.Mutex
	seen        bool
	consistency string
	multiWrite  bool
}

// check returns an error if the account's consistency is too weak for the
// protocol (unless allowWeak) or it has several write regions. An account
// whose properties were not seen passes.
func (a *accountInfo) check(allowWeak bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.seen {
		return nil
	}
	if a.multiWrite {
		return fmt.Errorf("cosmos: the account has several write regions: compare-and-swap by ETag does not hold across them (conflicts are resolved last writer wins); use an account with a single write region")
	}
	if !strongEnough[strings.ToLower(a.consistency)] && !allowWeak {
		return fmt.Errorf("cosmos: the account's default consistency is %s: the store needs Strong, or Bounded Staleness read in the write region, so that every client reads every finished write (a client cannot ask for more than the account's level); AllowWeakConsistency=true in the connection string accepts it for single-replica servers (the emulator, test servers), never for an Azure account", a.consistency)
	}
	return nil
}

// accountTransport records the account properties (the answer to GET on
// the account's root) as they go by.
type accountTransport struct {
	next policy.Transporter
	info *accountInfo
}

func (t accountTransport) Do(req *http.Request) (*http.Response, error) {
	resp, err := t.next.Do(req)
	if err != nil || req.Method != http.MethodGet || strings.Trim(req.URL.Path, "/") != "" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	b, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if rerr != nil {
		return resp, nil // the SDK reads the body and reports it
	}
	var props struct {
		Consistency struct {
			Level string `json:"defaultConsistencyLevel"`
		} `json:"userConsistencyPolicy"`
		MultiWrite bool `json:"enableMultipleWriteLocations"`
	}
	if json.Unmarshal(b, &props) == nil && props.Consistency.Level != "" {
		t.info.mu.Lock()
		t.info.seen, t.info.consistency, t.info.multiWrite = true, props.Consistency.Level, props.MultiWrite
		t.info.mu.Unlock()
	}
	return resp, nil
}
