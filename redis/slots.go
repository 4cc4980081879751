package redis

import (
	"strconv"
	"strings"
	"sync"
)

// Redis Cluster maps every key to one of clusterSlots slots: CRC16
// (XMODEM) of the key's hash tag, or of the whole key when it has none.

const clusterSlots = 16384

// crcTable is CRC16-XMODEM (polynomial 0x1021) byte by byte.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c = c<<8 ^ crcTable[byte(c>>8)^s[i]]
	}
	return c
}

// keySlot is the slot of key, as Redis computes it: the hash tag is what
// lies between the first '{' and the first '}' after it, if not empty.
func keySlot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return int(crc16(key)) % clusterSlots
}

// slotTags returns, for every slot, a hash tag of that slot: "_" and the
// smallest number that hashes there. No namespace starts with "_" (a
// namespace is a DNS label), so no tag is a namespace's.
var slotTags = sync.OnceValue(func() *[clusterSlots]string {
	var tags [clusterSlots]string
	left := clusterSlots
	buf := []byte("_")
	for i := 0; left > 0; i++ {
		buf = strconv.AppendInt(buf[:1], int64(i), 10)
		s := int(crc16(string(buf))) % clusterSlots // no allocation: the conversion is not kept
		if tags[s] == "" {
			tags[s] = string(buf)
			left--
		}
	}
	return &tags
})
