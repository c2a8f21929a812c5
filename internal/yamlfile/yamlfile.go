// Package yamlfile reads a hand-written YAML configuration file, the rules
// files of the service and of the gate: one document, decoded strictly, every
// problem placed at a line and column, and never a panic from the decoder.
package yamlfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Error is one problem in the file, at the line and column it starts.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

// File is a parsed document, kept to place later problems found in its values.
type File struct {
	f *ast.File
}

// Decode parses data as one YAML document and decodes it into v, refusing
// fields v does not have. An empty document leaves v as it is. The error is
// always an *Error.
func Decode(data []byte, v any) (_ *File, err error) {
	// The decoder is a third party's and the file is anyone's who can write
	// it: a decoder bug we have not met yet is a refused file, not a crash.
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Line: 1, Column: 1, Msg: fmt.Sprintf("the YAML decoder could not read this file (%v)", r)}
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fromYAML(err)
	}
	file := &File{f: f}
	if len(f.Docs) > 1 {
		return nil, &Error{Line: 1, Column: 1, Msg: "a rules file holds one YAML document"}
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return file, nil
	}
	// go-yaml answers a tag on a value of the wrong shape with a nil pointer
	// (a tagged scalar where a list goes panics in decodeSlice), and nothing a
	// rules file says needs a tag: refuse them all, at the first one.
	var tags tagFinder
	ast.Walk(&tags, f.Docs[0].Body)
	if tags.first != nil {
		line, col := nodePos(tags.first)
		return nil, &Error{Line: line, Column: col, Msg: fmt.Sprintf("YAML tags such as %s are not read in a rules file", tags.first.Start.Value)}
	}
	if err := yaml.NodeToValue(f.Docs[0].Body, v, yaml.Strict()); err != nil {
		return nil, fromYAML(err)
	}
	return file, nil
}

type tagFinder struct{ first *ast.TagNode }

// Visit stops the walk at the first tag.
func (t *tagFinder) Visit(n ast.Node) ast.Visitor {
	if t.first != nil {
		return nil
	}
	if tag, ok := n.(*ast.TagNode); ok {
		t.first = tag
		return nil
	}
	return t
}

// Pos is the line and column of the node at a YAML path such as
// `$.rules[2].match`, or of its nearest parent that is present; 1:1 when none is.
func (file *File) Pos(path string) (int, int) {
	if file == nil {
		return 1, 1
	}
	for path != "" {
		if p, err := yaml.PathString(path); err == nil {
			if n, err := p.FilterFile(file.f); err == nil && n != nil {
				return nodePos(n)
			}
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return 1, 1
}

// nodePos is where a node starts: a mapping's token is its first colon, so use
// its first key instead.
func nodePos(n ast.Node) (int, int) {
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			n = m.Values[0].Key
		}
	case *ast.MappingValueNode:
		n = m.Key
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 1, 1
}

// fromYAML places a go-yaml error at its token.
func fromYAML(err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
		p := ye.GetToken().Position
		return &Error{Line: p.Line, Column: p.Column, Msg: ye.GetMessage()}
	}
	return &Error{Line: 1, Column: 1, Msg: err.Error()}
}
