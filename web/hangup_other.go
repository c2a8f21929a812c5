//go:build !linux

package web

func newHangups() hangups { return readHangups{} }
