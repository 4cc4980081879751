package driver

import "fmt"

// Chunks splits a frame into pieces of at most max bytes, for a store whose
// values or items are smaller than a frame can be (max <= 0: one piece).
// The pieces share frame's memory. Store them with their index, and the
// count and total size beside them, so that JoinChunks can check them.
func Chunks(frame []byte, max int) [][]byte {
	if max <= 0 || len(frame) <= max {
		return [][]byte{frame}
	}
	out := make([][]byte, 0, (len(frame)+max-1)/max)
	for len(frame) > max {
		out = append(out, frame[:max])
		frame = frame[max:]
	}
	return append(out, frame)
}

// JoinChunks reassembles the frame that Chunks split into count pieces of
// size bytes in all. chunks[i] is the piece stored at index i (nil if it is
// missing). size < 0 skips the size check, for a backend that does not
// record it. It fails with an error wrapping ErrCorrupt when a piece
// is missing or there are more or fewer pieces or bytes than recorded; the
// engine reports the releases using such a part as corrupt. (Returning the
// frame as stored and letting the engine's digest check catch the damage is
// enough for correctness; the check here says what is wrong.)
func JoinChunks(chunks [][]byte, count int, size int64) ([]byte, error) {
	if len(chunks) != count {
		return nil, fmt.Errorf("%w: %d chunks stored, %d recorded", ErrCorrupt, len(chunks), count)
	}
	var n int64
	for i, c := range chunks {
		if c == nil {
			return nil, fmt.Errorf("%w: chunk %d of %d is missing", ErrCorrupt, i, count)
		}
		n += int64(len(c))
	}
	if size >= 0 && n != size {
		return nil, fmt.Errorf("%w: chunks hold %d bytes, %d recorded", ErrCorrupt, n, size)
	}
	if count == 0 {
		return []byte{}, nil
	}
	return join(chunks), nil
}

// join concatenates chunks.
func join(chunks [][]byte) []byte {
	if len(chunks) == 1 {
		return chunks[0]
	}
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	out := make([]byte, 0, n)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out
}
