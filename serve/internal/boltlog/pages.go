package boltlog

// The pages of a bbolt file, checked before bbolt maps it: every page the
// newest meta page reaches (its buckets' branch and leaf pages, inline
// buckets, the freelist) is read with ReadAt, and every element header in
// it must point inside its page. bbolt trusts those headers: one that
// points past the end of the mapped file is a fault, not an error, and
// its own check reads them on a goroutine of its own.

import (
	"encoding/binary"
	"fmt"
	"os"
)

// The page layout (bbolt's internal/common): a 16-byte header (id,
// flags, count, overflow), then 16-byte elements.
const (
	pageHeader   = 16
	elementSize  = 16
	branchFlag   = 0x01
	leafFlag     = 0x02
	freelistFlag = 0x10
	bucketFlag   = 0x01 // a leaf element that is a bucket
	bucketHeader = 16   // a bucket's value: root page id, sequence
	maxDepth     = 64
	noFreelist   = ^uint64(0)
)

// pageWalk reads the pages of one file.
type pageWalk struct {
	f        *os.File
	size     int64
	pageSize int
	pages    uint64 // the high-water mark the meta gives
	seen     map[uint64]bool
}

// checkPages checks the pages meta m reaches in f, a file of size bytes.
func checkPages(f *os.File, size int64, m boltMeta) error {
	w := &pageWalk{f: f, size: size, pageSize: int(m.pageSize), pages: m.pages, seen: map[uint64]bool{}}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	return w.bucket(m.root, nil, 0)
}

// read is page id and its overflow pages.
func (w *pageWalk) read(id uint64) ([]byte, error) {
	if id < 2 || id >= w.pages {
		return nil, fmt.Errorf("a page refers to page %d, outside the %d pages its meta page gives", id, w.pages)
	}
	if w.seen[id] {
		return nil, fmt.Errorf("page %d is reached twice", id)
	}
	w.seen[id] = true
	off := int64(id) * int64(w.pageSize)
	head := make([]byte, pageHeader)
	if _, err := w.f.ReadAt(head, off); err != nil {
		return nil, fmt.Errorf("page %d does not read: %v", id, err)
	}
	if got := binary.LittleEndian.Uint64(head); got != id {
		return nil, fmt.Errorf("page %d says it is page %d", id, got)
	}
	over := uint64(binary.LittleEndian.Uint32(head[12:]))
	if id+over >= w.pages {
		return nil, fmt.Errorf("page %d runs on for %d pages, past the %d pages its meta page gives", id, over, w.pages)
	}
	n := int64(over+1) * int64(w.pageSize)
	if off+n > w.size {
		return nil, fmt.Errorf("page %d runs past the end of the file", id)
	}
	p := make([]byte, n)
	if _, err := w.f.ReadAt(p, off); err != nil {
		return nil, fmt.Errorf("page %d does not read: %v", id, err)
	}
	for i := uint64(1); i <= over; i++ {
		w.seen[id+i] = true
	}
	return p, nil
}

// freelist checks the freelist page: its ids fit in it.
func (w *pageWalk) freelist(id uint64) error {
	p, err := w.read(id)
	if err != nil {
		return fmt.Errorf("the freelist: %w", err)
	}
	if flags := binary.LittleEndian.Uint16(p[8:]); flags != freelistFlag {
		return fmt.Errorf("the freelist, page %d, is marked %#x", id, flags)
	}
	count, at := uint64(binary.LittleEndian.Uint16(p[10:])), uint64(pageHeader)
	if count == 0xFFFF {
		if len(p) < pageHeader+8 {
			return fmt.Errorf("the freelist, page %d, is too short for its count", id)
		}
		count, at = binary.LittleEndian.Uint64(p[pageHeader:]), pageHeader+8
	}
	if count > uint64(len(p)) || at+8*count > uint64(len(p)) {
		return fmt.Errorf("the freelist, page %d, says it holds %d ids, more than fit in it", id, count)
	}
	return nil
}

// bucket checks the tree of a bucket: rooted at page root, or, when root
// is 0, the inline page in its value.
func (w *pageWalk) bucket(root uint64, inline []byte, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("its buckets nest more than %d deep", maxDepth)
	}
	if root == 0 {
		return w.node(inline, "an inline bucket", depth)
	}
	p, err := w.read(root)
	if err != nil {
		return err
	}
	return w.node(p, fmt.Sprintf("page %d", root), depth)
}

// node checks one branch or leaf page p and what it reaches.
func (w *pageWalk) node(p []byte, where string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: the tree is more than %d deep", where, maxDepth)
	}
	if len(p) < pageHeader {
		return fmt.Errorf("%s is shorter than a page header", where)
	}
	flags, count := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:]))
	if flags != branchFlag && flags != leafFlag {
		return fmt.Errorf("%s is marked %#x, neither a branch nor a leaf", where, flags)
	}
	if pageHeader+count*elementSize > len(p) {
		return fmt.Errorf("%s says it holds %d elements, more than fit in it", where, count)
	}
	for i := range count {
		at := pageHeader + i*elementSize
		e := p[at : at+elementSize]
		if flags == branchFlag {
			pos, ksize := uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
			if uint64(at)+pos+ksize > uint64(len(p)) {
				return fmt.Errorf("%s: element %d's key runs past the page", where, i)
			}
			child, err := w.read(binary.LittleEndian.Uint64(e[8:]))
			if err != nil {
				return err
			}
			if err := w.node(child, fmt.Sprintf("page %d", binary.LittleEndian.Uint64(e[8:])), depth+1); err != nil {
				return err
			}
			continue
		}
		eflags := binary.LittleEndian.Uint32(e)
		pos, ksize, vsize := uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:])), uint64(binary.LittleEndian.Uint32(e[12:]))
		end := uint64(at) + pos + ksize + vsize
		if end > uint64(len(p)) {
			return fmt.Errorf("%s: element %d's key and value run past the page", where, i)
		}
		if eflags&bucketFlag == 0 {
			continue
		}
		v := p[uint64(at)+pos+ksize : end]
		if len(v) < bucketHeader {
			return fmt.Errorf("%s: element %d is a bucket whose header is cut short", where, i)
		}
		if err := w.bucket(binary.LittleEndian.Uint64(v), v[bucketHeader:], depth+1); err != nil {
			return err
		}
	}
	return nil
}
