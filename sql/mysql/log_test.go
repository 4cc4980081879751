package mysql

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// What the MySQL driver logs (a connection lost mid-reply: "unexpected
// EOF") goes to the store's log, not to the driver's own logger on the
// process's standard error, which a Helm command shows its user.
func TestMySQLDriverLogsToTheStoreLog(t *testing.T) {
	dsn := sqlenv.MySQL(t)
	addr := regexp.MustCompile(`tcp\(([^)]*)\)`)
	loss := new(testenv.ReplyLoss)
	p := testenv.NewLossyProxy(t, addr.FindStringSubmatch(dsn)[1], loss)
	var mu sync.Mutex
	var ours []string
	logf := func(format string, v ...interface{}) {
		mu.Lock()
		ours = append(ours, fmt.Sprintf(format, v...))
		mu.Unlock()
	}
	s := sqltest.Open(t, "mysql", addr.ReplaceAllString(dsn, "tcp("+p.Addr+")"), helm3.WithLog(logf))
	defer s.Close()
	loss.Arm(1)
	s.Get(sqltest.Key("app", 1)) // its reply lost: the driver logs
	if !loss.Disarm() {
		t.Fatal("no reply was lost")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(ours, "\n"), "mysql") {
		t.Errorf("the store's log has nothing from the MySQL driver: %q", ours)
	}
}
