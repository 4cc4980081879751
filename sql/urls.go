package sql

import "github.com/helmstore/helmstore/driver"

func init() {
	driver.Register("postgres", openPostgres)
	driver.Register("sqlite", openSQLite)
	driver.Register("mysql", openMySQL)
}
