//go:build unix

package store

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapRevokes maps the counter file beside the database file dbFile, made
// (eight zero bytes) with the database's mode and, when run as root, its owner.
func mapRevokes(dbFile string) (*revokeSignal, error) {
	db, err := os.Stat(dbFile)
	if err != nil {
		return nil, err
	}
	path := dbFile + "-revoked"
	// O_NOFOLLOW: the counter is this directory's own file, never one a link
	// points to.
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(db.Mode().Perm()))
	if err != nil {
		return nil, fmt.Errorf("revocation counter %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("revocation counter %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("revocation counter %s is not a regular file", path)
	}
	if os.Geteuid() == 0 {
		if sys, ok := db.Sys().(*unix.Stat_t); ok {
			_ = unix.Fchown(fd, int(sys.Uid), int(sys.Gid))
		}
	}
	if st.Size < 8 {
		if err := unix.Ftruncate(fd, 8); err != nil {
			return nil, fmt.Errorf("revocation counter %s: %w", path, err)
		}
	}
	m, err := unix.Mmap(fd, 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("revocation counter %s: %w", path, err)
	}
	// A mapping is page-aligned, so the counter is aligned for atomic access.
	// It stays mapped for the life of the process, as SQLite keeps -shm's.
	return &revokeSignal{n: (*uint64)(unsafe.Pointer(&m[0]))}, nil
}
