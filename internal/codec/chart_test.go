package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// decodedChart is a decoded chart part read back as ChartFields, with its
// metadata and lock as JSON, so that a test can compare it with what was
// encoded.
func decodedChart(t testing.TB, raw []byte) (*ChartFields, error) {
	t.Helper()
	var metadata, lock json.RawMessage
	p, err := DecodeChart(raw, &metadata, &lock)
	if err != nil {
		return nil, err
	}
	sh := p.Share()
	file := func(f *ChartFile, name string, data []byte, mod time.Time) { *f = ChartFile{name, data, mod} }
	return &ChartFields{
		Metadata: metadata, Lock: lock, Values: sh.Values(), Schema: sh.Schema(),
		ModTime: p.ModTime(), SchemaModTime: p.SchemaModTime(),
		Templates: BuildFiles(sh, p.Templates(), file), Files: BuildFiles(sh, p.Files(), file),
	}, nil
}

func chartRaw(t testing.TB, c *ChartFields) []byte {
	t.Helper()
	pieces, err := EncodeChart(c)
	if err != nil {
		t.Fatal(err)
	}
	return NewPieces(KindChart, pieces).Raw()
}

// oddFiles is helm3codec's "odd files" edge chart (nil metadata and lock).
func oddFiles() *ChartFields {
	return &ChartFields{
		Templates: []*ChartFile{nil, {Name: "nil-data"}, {Name: "empty", Data: []byte{}}, {Name: "t\xffbad\xc3", Data: []byte("x")}, {Name: "", Data: []byte("no name")}},
		Files:     []*ChartFile{{Name: "f", Data: []byte{0, 1, 2, 0xff}}, nil},
		Schema:    []byte(`{"type":"object"}`),
	}
}

// A chart without mod times is written exactly as before they existed
// (version 2, bytes pinned from then), whatever location its zero times
// are in: a chart already stored keeps its digest, and one written through
// Helm 3 and through Helm 4 is stored once.
func TestChartVersion2Unchanged(t *testing.T) {
	t.Parallel()
	utc0 := time.Time{}.In(time.FixedZone("Zero", 0))
	for name, tc := range map[string]struct {
		c    *ChartFields
		want string
	}{
		"zero":      {&ChartFields{}, "6302046e756c6c046e756c6c0100000000"},
		"odd files": {oddFiles(), "6302046e756c6c046e756c6c010012060001086e696c2d646174610205656d70747900020a74efbfbd626164efbfbd010200070302016604007b2274797065223a226f626a656374227d786e6f206e616d65000102ff"},
		"zero times in a zone": {&ChartFields{ModTime: utc0, SchemaModTime: utc0, Templates: []*ChartFile{{Name: "a", ModTime: utc0}}},
			"6302046e756c6c046e756c6c0100000201016100"},
	} {
		if got := hex.EncodeToString(chartRaw(t, tc.c)); got != tc.want {
			t.Errorf("%s: bytes\n%s, want\n%s", name, got, tc.want)
		}
	}
}

// roundTrips checks that decoded, a decoded chart, encodes to bytes that
// decode to a chart that is its own round trip (and to decoded itself but
// for a time that read back in a zone of offset 0 written "+00:00", which
// then writes as UTC: so does time.Time's JSON round trip).
func roundTrips(t testing.TB, decoded *ChartFields) {
	t.Helper()
	raw := chartRaw(t, decoded)
	again, err := decodedChart(t, raw)
	if err != nil {
		t.Fatalf("a decoded chart encodes to bytes that do not decode: %v", err)
	}
	if twice := chartRaw(t, again); !bytes.Equal(twice, raw) {
		t.Fatalf("a decoded chart's round trip encodes to other bytes:\n%x\n%x", twice, raw)
	}
	if raw[1] == chartVersion && !reflect.DeepEqual(again, decoded) {
		t.Fatal("a decoded chart without mod times does not round-trip")
	}
}

// jsonTime is time.Time's JSON round trip of tm: what Helm 4's drivers give
// back for a mod time.
func jsonTime(t testing.TB, tm time.Time) time.Time {
	t.Helper()
	b, err := json.Marshal(tm)
	if err != nil {
		t.Fatal(err)
	}
	var out time.Time
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// modTimes are times in every kind of zone time.Time's JSON tells apart.
func modTimes() map[string]time.Time {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return map[string]time.Time{
		"utc":              base,
		"nanoseconds":      base.Add(123456789),
		"monotonic":        time.Now(),
		"local":            base.In(time.Local),
		"fixed":            base.In(time.FixedZone("CEST", 2*3600)),
		"half hour":        base.In(time.FixedZone("IST", 5*3600+1800)),
		"negative":         base.In(time.FixedZone("PST", -8*3600)),
		"offset seconds":   base.In(time.FixedZone("LMT", 1172)),
		"negative seconds": base.In(time.FixedZone("LMT", -(3600 + 59))),
		"under a minute":   base.In(time.FixedZone("S", 30)),
		"zero offset":      base.In(time.FixedZone("GMT", 0)),
		"zero in a zone":   time.Time{}.In(time.FixedZone("Z1", 3600)),
		"year 0":           time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		"year 9999":        time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		"before 1970":      time.Date(1900, 6, 1, 0, 0, 0, 1, time.FixedZone("", -3600)),
	}
}

func timeFields(ts ...time.Time) *ChartFields {
	c := &ChartFields{Schema: []byte("{}"), Templates: []*ChartFile{}, Files: []*ChartFile{nil}}
	c.ModTime, c.SchemaModTime = ts[0], ts[1]
	for i, tm := range ts[2:] {
		f := &ChartFile{Name: strings.Repeat("f", i), Data: []byte{byte(i)}, ModTime: tm}
		if i%2 == 0 {
			c.Templates = append(c.Templates, f, nil)
		} else {
			c.Files = append(c.Files, f)
		}
	}
	return c
}

// Mod times read back as time.Time's JSON round trip gives them (the same
// instant, zone and time.Local), whatever else the chart holds.
func TestChartModTimesRoundTrip(t *testing.T) {
	t.Parallel()
	ts := modTimes()
	check := func(t *testing.T, c *ChartFields) {
		t.Helper()
		raw := chartRaw(t, c)
		if raw[1] != chartVersionTimes {
			t.Fatalf("version %d, want %d", raw[1], chartVersionTimes)
		}
		got, err := decodedChart(t, raw)
		if err != nil {
			t.Fatal(err)
		}
		want := *c
		want.Metadata, want.Lock = json.RawMessage("null"), json.RawMessage("null")
		want.ModTime, want.SchemaModTime = jsonTime(t, c.ModTime), jsonTime(t, c.SchemaModTime)
		for _, fs := range []*[]*ChartFile{&want.Templates, &want.Files} {
			*fs = slices.Clone(*fs)
			for i, f := range *fs {
				if f != nil {
					g := *f
					g.ModTime = jsonTime(t, f.ModTime)
					(*fs)[i] = &g
				}
			}
		}
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", got, &want)
		}
		roundTrips(t, got)
	}
	for name, tm := range ts {
		t.Run(name, func(t *testing.T) {
			check(t, timeFields(tm, time.Time{}))
			check(t, timeFields(time.Time{}, tm))
			check(t, timeFields(time.Time{}, time.Time{}, time.Time{}, tm, tm, ts["utc"], tm))
		})
	}
	all := make([]time.Time, 0, 2*len(ts))
	for _, tm := range ts {
		all = append(all, tm, tm)
	}
	t.Run("all", func(t *testing.T) { check(t, timeFields(all...)) })
}

// time.Local decides how a time with an offset reads back (in time.Local
// when its offset is time.Local's then): so it does for a mod time. Not
// parallel: it sets time.Local.
func TestChartModTimesLocal(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.FixedZone("CET", 3600) // no zone database
	}
	time.Local = berlin
	base := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	summer := base.AddDate(0, 6, 0)
	for name, tm := range map[string]time.Time{
		"local": base.In(time.Local), "local summer": summer.In(time.Local),
		"offset of local": base.In(time.FixedZone("X", 3600)), "local's other offset": base.In(time.FixedZone("X", 7200)),
		"utc": base,
	} {
		got, err := decodedChart(t, chartRaw(t, timeFields(tm, time.Time{})))
		if err != nil {
			t.Fatal(err)
		}
		if want := jsonTime(t, tm); !reflect.DeepEqual(got.ModTime, want) {
			t.Errorf("%s: %v (%p), want %v (%p)", name, got.ModTime, got.ModTime.Location(), want, want.Location())
		}
	}
}

// A run of equal times costs a byte each after the first, as a zero time does.
func TestChartModTimesCompact(t *testing.T) {
	t.Parallel()
	tm := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	size := func(times ...time.Time) int {
		c := &ChartFields{ModTime: tm}
		for _, ft := range times {
			c.Files = append(c.Files, &ChartFile{Name: "f", ModTime: ft})
		}
		return len(chartRaw(t, c))
	}
	zero := size(time.Time{}, time.Time{}, time.Time{})
	if same := size(tm, tm, tm); same != zero {
		t.Errorf("three files of the chart's mod time: %d bytes, %d with no mod time", same, zero)
	}
	if other := size(tm, tm.Add(time.Hour), tm); other < zero+6 {
		t.Errorf("a file of another mod time costs %d bytes, not the 7 of a time in full", other-zero+1)
	}
}

// Mod times Helm's JSON cannot hold are refused, as Helm's drivers refuse them.
func TestChartModTimesRefused(t *testing.T) {
	t.Parallel()
	for name, tm := range map[string]time.Time{
		"year 10000":   time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		"year -1":      time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		"local year":   time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC).In(time.FixedZone("", 3600)),
		"24 hour zone": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).In(time.FixedZone("", 24*3600)),
	} {
		if _, err := json.Marshal(tm); err == nil && name != "24 hour zone" {
			t.Errorf("%s: Helm's JSON holds it", name)
		}
		if _, err := EncodeChart(timeFields(time.Time{}, time.Time{}, tm)); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// damagedTimes returns a version-3 part of one template whose mod times
// section (chart, schema, template) is times.
func damagedTimes(times ...byte) []byte {
	b := []byte{'c', 3, 4, 'n', 'u', 'l', 'l', 4, 'n', 'u', 'l', 'l', 1, tagNil, 0, 2, fileNoData, 1, 'a', 0}
	return append(b, times...)
}

// A damaged or truncated version-3 part is ErrCorrupt (never a panic nor a
// chart other than one it could have been written as), and decoding it
// allocates a small multiple of its size. Not parallel: it measures what
// it allocates.
func TestChartModTimesDamage(t *testing.T) {
	full := func(sec int64, nsec, zone byte) []byte {
		return append(binary.AppendUvarint(nil, zigzag(sec)+timeFull), nsec, zone)
	}
	for name, tc := range map[string]struct {
		raw  []byte
		want string
	}{
		"same first":     {damagedTimes(timeSame, 0, 0), "the same as no time before it"},
		"nanoseconds":    {damagedTimes(append(full(1, 0, 0)[:1], 0x80, 0x94, 0xeb, 0xdc, 0x03, 0, 0, 0)...), "1000000000 nanoseconds"},
		"zone":           {damagedTimes(append(full(1, 0, 0)[:2], 0xc0, 0x16, 0, 0)...), "zone 2880"},
		"same in full":   {damagedTimes(append(full(1, 0, 0), append(full(1, 0, 0), 0)...)...), "the same as the one before it"},
		"zero in full":   {damagedTimes(append(full(-62135596800, 0, 0), 0, 0)...), "the zero time in full"},
		"year":           {damagedTimes(append(full(253402300800, 0, 0), 0, 0)...), "year outside"},
		"missing time":   {damagedTimes(0, 0), "bad length"},
		"extra time":     {damagedTimes(0, 0, 0, 0), "add up to 0 bytes, the part holds 1"},
		"truncated full": {damagedTimes(full(1, 0, 0)[:2]...), "bad length"},
		"version 4":      {append([]byte{'c', 4}, damagedTimes(0, 0, 0)[2:]...), "chart encoding 4"},
	} {
		_, err := decodedChart(t, tc.raw)
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one wrapping ErrCorrupt saying %q", name, err, tc.want)
		}
	}
	if _, err := decodedChart(t, damagedTimes(0, 0, 0)); err != nil {
		t.Fatalf("the undamaged part: %v", err)
	}

	ts := modTimes()
	var all []time.Time
	for _, tm := range ts {
		all = append(all, tm, tm, tm)
	}
	c := timeFields(all...)
	c.Values = map[string]interface{}{"a": []interface{}{1.0, "x", map[string]interface{}{"b": nil}}}
	raw := chartRaw(t, c)
	r := rand.New(rand.NewPCG(3, 4))
	var worst float64
	try := func(b []byte) {
		t.Helper()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := decodedChart(t, b)
		runtime.ReadMemStats(&after)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d bytes: error %v does not wrap ErrCorrupt", len(b), err)
			}
		} else {
			roundTrips(t, got)
		}
		grew := float64(after.TotalAlloc - before.TotalAlloc)
		if ratio := grew / float64(len(b)); len(b) >= 4<<10 && ratio > worst {
			worst = ratio
		}
		if grew > 100*float64(len(b))+64<<10 {
			t.Fatalf("%d bytes: decoding allocated %.0f bytes", len(b), grew)
		}
	}
	for n := 0; n < len(raw); n++ {
		try(raw[:n])
	}
	// Mostly in the sections before the blobs, where the times are.
	for i := 0; i < 3000; i++ {
		b := bytes.Clone(raw)
		for j := 0; j < 1+r.IntN(3); j++ {
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		try(b)
	}
	// Hostile counts: a table of nil files as long as the part (which is a
	// chart), one longer than the part, a file larger than any part.
	head := []byte{'c', 3, 4, 'n', 'u', 'l', 'l', 4, 'n', 'u', 'l', 'l', 1, tagNil, 0}
	nils := append(binary.AppendUvarint(bytes.Clone(head), 1<<15+1), make([]byte, 1<<15)...)
	if _, err := decodedChart(t, append(nils, 0, 0, 0)); err != nil {
		t.Fatalf("a table of nil files: %v", err)
	}
	for _, b := range [][]byte{
		append(nils, 0, 0, 0),
		append(binary.AppendUvarint(bytes.Clone(head), 1<<15+2), make([]byte, 1<<15)...),
		append(bytes.Clone(head), 2, fileData, 1, 'a', 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0),
	} {
		try(b)
	}
	t.Logf("at worst, decoding a part of 4 KiB or more allocated %.1f bytes per byte", worst)
}

// FuzzDecodeChartTimes: any bytes decode to an error wrapping ErrCorrupt or
// to a chart that encodes to bytes decoding to the same chart.
func FuzzDecodeChartTimes(f *testing.F) {
	ts := modTimes()
	f.Add(chartRaw(f, oddFiles()))
	f.Add(chartRaw(f, timeFields(ts["utc"], ts["fixed"], ts["utc"], ts["nanoseconds"], ts["offset seconds"])))
	f.Add(damagedTimes(0, 0, 0))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := decodedChart(t, raw)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		roundTrips(t, c)
	})
}
