package caswire

// LabelPending is the label the protocol puts on a head object that is not
// committed. With the value PendingParts the head is being created: shown
// to readers once every part it references is stored and referred to by
// it. With any other value (PendingHidden) it is never shown: a Create
// being undone, or a head written by an early version of crsplit before
// its parts.
//
// LabelWriter and LabelPendingUntil go with it on a head being created:
// a token naming the Create (random), so that a writer that lost the
// answer to a write knows its own head when it reads it; and the end of
// the Create's pending window (Unix milliseconds, by the writer's clock),
// after which the writer makes no write that could make the head visible.
// A head still pending ClockSkew after its window ended is abandoned, and
// the next writer that meets it commits it (if it is complete) or removes
// it. Heads written before these labels existed have neither: they are
// abandoned PendingTimeout after they were created.
const (
	LabelPending      = "helmstore.io/pending"
	PendingParts      = "parts"
	PendingHidden     = "true"
	LabelWriter       = "helmstore.io/writer"
	LabelPendingUntil = "helmstore.io/pending-until"
)

// LabelLatest indexes the latest revision of each release, so that a
// summary listing of the latest revisions selects those head objects
// alone (LatestRetired: any other value or none). A head is created with
// LatestMarked; it is set to LatestRetired once a higher revision of the
// release is committed, and a Delete of a head that is not retired marks
// the highest visible revision below it first. A head without the label
// (written before it existed) counts as marked.
const (
	LabelLatest   = "helmstore.io/latest"
	LatestMarked  = "true"
	LatestRetired = "false"
)

// ProtocolLabel reports whether k is one of the protocol's own labels
// above, which a head read back does not carry (the engine's labels under
// the same prefix, driver.ReservedLabelPrefix, are the head's own).
func ProtocolLabel(k string) bool {
	switch k {
	case LabelPending, LabelWriter, LabelPendingUntil, LabelLatest:
		return true
	}
	return false
}
