package caswire

import "github.com/helmstore/helmstore/driver"

// The values of cas.Kind, one per kind of object the protocol stores
// (cas.KindHead, ...). They are stored: Cosmos DB items record their
// referrers' kinds by number.
const (
	KindHead = iota + 1
	KindChart
	KindValues
	KindManifest
	KindChunk
)

// PartKind returns the kind (KindChart, KindValues or KindManifest) of the
// objects holding parts of kind k.
func PartKind(k driver.Kind) uint8 {
	switch k {
	case driver.KindChart:
		return KindChart
	case driver.KindValues:
		return KindValues
	default:
		return KindManifest
	}
}

// PartCodecKind is the inverse of PartKind: the kind of the parts that
// objects of kind k hold (driver.KindManifest for any kind but KindChart
// and KindValues).
func PartCodecKind(k uint8) driver.Kind {
	switch k {
	case KindChart:
		return driver.KindChart
	case KindValues:
		return driver.KindValues
	}
	return driver.KindManifest
}
