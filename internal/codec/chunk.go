package codec

// Chunks splits frame into pieces of at most max bytes (max <= 0: one piece).
// The pieces share frame's memory.
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

// Join reassembles chunks written by Chunks.
func Join(chunks [][]byte) []byte {
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
