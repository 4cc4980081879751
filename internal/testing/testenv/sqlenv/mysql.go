package sqlenv

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// MySQLEnv names a MySQL or MariaDB server for tests, as a go-sql-driver DSN
// without a database (user:pass@tcp(host:3306)/).
const MySQLEnv = "HELMSTORE_TEST_MYSQL"

const defaultMySQL = "root@tcp(127.0.0.1:3306)/"

var (
	myOnce sync.Once
	myDSN  string
	myErr  error
)

// MySQLServer returns the DSN (no database) of a reachable MySQL or MariaDB
// server: HELMSTORE_TEST_MYSQL, else the machine's own on 127.0.0.1:3306,
// started with start-stop-daemon if mariadbd is installed but stopped.
func MySQLServer(t testing.TB) string {
	t.Helper()
	myOnce.Do(func() { myDSN, myErr = findMySQL() })
	if myErr != nil {
		testenv.Unavailable(t, "MySQL/MariaDB", myErr)
	}
	return myDSN
}

func findMySQL() (string, error) {
	if d := os.Getenv(MySQLEnv); d != "" {
		return d, pingMySQL(d)
	}
	if !testenv.Reachable("127.0.0.1:3306") {
		bin, err := exec.LookPath("mariadbd")
		if err != nil {
			if _, e := os.Stat("/usr/sbin/mariadbd"); e == nil {
				bin = "/usr/sbin/mariadbd"
			} else if dockerAvailable() {
				return mysqlContainer("mariadb:10.11")
			} else {
				return "", errors.New("nothing listens on 127.0.0.1:3306, mariadbd is not installed, no Docker engine answers, and " + MySQLEnv + " is not set")
			}
		}
		if err := testenv.Run("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", bin); err != nil {
			return "", err
		}
		if !testenv.WaitReachable("127.0.0.1:3306", 60*time.Second) {
			return "", errors.New("started mariadbd but 127.0.0.1:3306 does not answer")
		}
	}
	return defaultMySQL, pingMySQL(defaultMySQL)
}

func pingMySQL(dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		err = db.PingContext(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// MySQL returns a DSN for a fresh, empty database on the server, dropped when
// t ends.
func MySQL(t testing.TB) string {
	t.Helper()
	return freshMySQLDatabase(t, MySQLServer(t))
}

func freshMySQLDatabase(t testing.TB, base string) string {
	t.Helper()
	name := testenv.UniqueName("hs_")
	db, err := sql.Open("mysql", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP DATABASE " + name)
		db.Close()
	})
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	return strings.TrimSpace(cfg.FormatDSN())
}
