package sqltest

import (
	"bytes"
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// AtRest returns drivertest.RunAtRest's harness for the SQL driver name: a
// new database from conn for each store, another pool over it for Again,
// and a scan of every column of every row of the store's tables.
func AtRest(name string, conn func(t testing.TB) string) drivertest.AtRest {
	var mu sync.Mutex
	conns := map[helm3.Store]string{}
	return drivertest.AtRest{
		New: func(t *testing.T, opts ...helm3.Option) helm3.Store {
			c := conn(t)
			s := Open(t, name, c, opts...)
			mu.Lock()
			conns[s] = c
			mu.Unlock()
			return s
		},
		Again: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			mu.Lock()
			c := conns[s]
			mu.Unlock()
			return Open(t, name, c, opts...)
		},
		Holds: func(t *testing.T, s helm3.Store, secret []byte) bool {
			db := BackendOf(t, s).DB()
			for _, table := range sqlbackend.Tables() {
				if tableHolds(t, db, table, secret) {
					return true
				}
			}
			return false
		},
	}
}

// tableHolds reports whether a column of a row of table contains secret.
func tableHolds(t *testing.T, db *sql.DB, table string, secret []byte) bool {
	rows, err := db.QueryContext(context.Background(), "SELECT * FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if bytes.Contains(v, secret) {
				return true
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}
