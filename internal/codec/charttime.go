package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// A version-3 chart part holds its mod times after its file tables: the
// chart's ModTime, its SchemaModTime, then one for each template and file
// that is not nil, in table order. A time is kept as Helm's JSON keeps it
// (time.Time's MarshalJSON, RFC 3339): its instant to the nanosecond as the
// text reads back, and its offset from UTC to the minute ('Z' for none);
// not its location's name nor a monotonic reading. Decoded, it is what
// time.Time's UnmarshalJSON gives for that text: UTC for 'Z', time.Local
// when the local offset at that instant is the one written, and otherwise a
// fixed zone of that offset. Each time is a uvarint tag:
//
//	0  the zero time (no offset)
//	1  the same as the last time written in full
//	n  (n >= 2) in full: zigzag(unix seconds) = n-2, then uvarint(nanoseconds)
//	   and uvarint(zone): 0 for 'Z', else zigzag(offset in minutes)+1
//
// Charts are often stamped with one time throughout, so a chart's times
// cost a byte each beyond the first.
const (
	timeZero = 0
	timeSame = 1
	timeFull = 2
)

// timeRec is a time as it is written in full.
type timeRec struct {
	sec  int64
	nsec uint64
	zone uint64 // 0: 'Z'; else zigzag(offset in minutes)+1
}

// zeroTime reports whether t is written as the zero time: time.Time's
// MarshalJSON writes it as the zero time's own text, which reads back as
// time.Time{}.
func zeroTime(t time.Time) bool {
	if !t.IsZero() {
		return false
	}
	_, off := t.Zone()
	return off == 0
}

func hasModTimes(c *ChartFields) bool {
	if !zeroTime(c.ModTime) || !zeroTime(c.SchemaModTime) {
		return true
	}
	for _, fs := range [][]*ChartFile{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil && !zeroTime(f.ModTime) {
				return true
			}
		}
	}
	return false
}

func zigzag(x int64) uint64 { return uint64(x<<1) ^ uint64(x>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// maxOffsetMinutes bounds a zone's offset, as RFC 3339's two-digit hours do.
const maxOffsetMinutes = 24*60 - 1

var (
	errTimeYear = errors.New("year outside of range [0,9999]")
	errTimeZone = errors.New("timezone hour outside of range [0,23]")
)

// recOf returns how t is written in full: as MarshalJSON writes it (the
// local clock and the offset truncated to minutes), read back.
func recOf(t time.Time) (timeRec, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return timeRec{}, errTimeYear
	}
	_, off := t.Zone()
	if off == 0 {
		return timeRec{sec: t.Unix(), nsec: uint64(t.Nanosecond())}, nil
	}
	m := off / 60
	if m < -maxOffsetMinutes || m > maxOffsetMinutes {
		return timeRec{}, errTimeZone
	}
	// The text holds the clock at off and says m minutes: it reads back
	// off-60m seconds later than t.
	return timeRec{sec: t.Unix() + int64(off-60*m), nsec: uint64(t.Nanosecond()), zone: zigzag(int64(m)) + 1}, nil
}

// timeOf is the time r reads back as through UnmarshalJSON.
func timeOf(r timeRec) time.Time {
	t := time.Unix(r.sec, int64(r.nsec)) // in time.Local
	if r.zone == 0 {
		return t.UTC()
	}
	off := int(unzigzag(r.zone-1)) * 60
	if _, local := t.Zone(); local == off {
		return t
	}
	return t.In(time.FixedZone("", off))
}

// timeWriter appends times, each but the first of a run of equal ones in
// full.
type timeWriter struct {
	b    []byte
	last timeRec
	any  bool // last is set
}

func (w *timeWriter) time(what string, t time.Time) error {
	if zeroTime(t) {
		w.b = append(w.b, timeZero)
		return nil
	}
	r, err := recOf(t)
	if err != nil {
		return fmt.Errorf("%s mod time %s: %w", what, t, err)
	}
	if w.any && r == w.last {
		w.b = append(w.b, timeSame)
		return nil
	}
	w.last, w.any = r, true
	w.b = binary.AppendUvarint(w.b, zigzag(r.sec)+timeFull)
	w.b = binary.AppendUvarint(w.b, r.nsec)
	w.b = binary.AppendUvarint(w.b, r.zone)
	return nil
}

func appendModTimes(b []byte, c *ChartFields) ([]byte, error) {
	w := &timeWriter{b: b}
	if err := w.time("chart", c.ModTime); err != nil {
		return nil, err
	}
	if err := w.time("chart schema", c.SchemaModTime); err != nil {
		return nil, err
	}
	for _, fs := range [][]*ChartFile{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil {
				if err := w.time(fmt.Sprintf("chart file %q", f.Name), f.ModTime); err != nil {
					return nil, err
				}
			}
		}
	}
	return w.b, nil
}

// timeReader reads the times a timeWriter wrote, refusing any other bytes
// for them (a time it would have written another way included), so that a
// chart has one encoding.
type timeReader struct {
	r    *chartReader
	last time.Time
	rec  timeRec
	any  bool
}

func (tr *timeReader) time(what string) (time.Time, error) {
	tag, err := tr.r.uvarint(what + " mod time")
	if err != nil {
		return time.Time{}, err
	}
	switch tag {
	case timeZero:
		return time.Time{}, nil
	case timeSame:
		if !tr.any {
			return time.Time{}, fmt.Errorf("%w %s mod time: the same as no time before it", errChart, what)
		}
		return tr.last, nil
	}
	r := timeRec{sec: unzigzag(tag - timeFull)}
	if r.nsec, err = tr.r.uvarint(what + " mod time"); err != nil {
		return time.Time{}, err
	}
	if r.zone, err = tr.r.uvarint(what + " mod time"); err != nil {
		return time.Time{}, err
	}
	if r.nsec >= 1e9 {
		return time.Time{}, fmt.Errorf("%w %s mod time: %d nanoseconds", errChart, what, r.nsec)
	}
	if r.zone > zigzag(maxOffsetMinutes)+1 {
		return time.Time{}, fmt.Errorf("%w %s mod time: zone %d", errChart, what, r.zone)
	}
	if tr.any && r == tr.rec {
		return time.Time{}, fmt.Errorf("%w %s mod time: in full, the same as the one before it", errChart, what)
	}
	t := timeOf(r)
	if r.zone == 0 && t.IsZero() {
		return time.Time{}, fmt.Errorf("%w %s mod time: the zero time in full", errChart, what)
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Errorf("%w %s mod time: %w", errChart, what, errTimeYear)
	}
	tr.last, tr.rec, tr.any = t, r, true
	return t, nil
}

// modTimes reads a version-3 part's mod times into p.
func (r *chartReader) modTimes(p *Chart) error {
	tr := &timeReader{r: r}
	var err error
	if p.modTime, err = tr.time("chart"); err != nil {
		return err
	}
	if p.schemaModTime, err = tr.time("schema"); err != nil {
		return err
	}
	for _, t := range []*ChartTable{&p.templates, &p.files} {
		for i := range t.entries {
			e := &t.entries[i]
			if e.flag != fileNil {
				if e.modTime, err = tr.time("file"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
