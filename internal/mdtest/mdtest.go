// Package mdtest reads Markdown as GitHub renders it (GFM, by goldmark),
// for tests that hold generated Markdown to what a reader will see. It
// imports nothing else of this repository.
package mdtest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Tables parses src as GFM and returns each table as rows of cell texts,
// the header row first.
func Tables(t testing.TB, src []byte) [][][]string {
	t.Helper()
	tables, err := tables(src)
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

func tables(src []byte) ([][][]string, error) {
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var tables [][][]string
	err := gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		tbl, ok := n.(*east.Table)
		if !ok {
			return gast.WalkContinue, nil
		}
		var rows [][]string
		for r := tbl.FirstChild(); r != nil; r = r.NextSibling() {
			switch r.(type) {
			case *east.TableHeader, *east.TableRow:
			default:
				return gast.WalkStop, fmt.Errorf("unexpected %s in a table", r.Kind())
			}
			var cells []string
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				if _, ok := c.(*east.TableCell); !ok {
					return gast.WalkStop, fmt.Errorf("unexpected %s in a table row", c.Kind())
				}
				cells = append(cells, inlineText(c, src))
			}
			rows = append(rows, cells)
		}
		tables = append(tables, rows)
		return gast.WalkSkipChildren, nil
	})
	return tables, err
}

func inlineText(n gast.Node, src []byte) string {
	var b strings.Builder
	_ = gast.Walk(n, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch x := n.(type) {
		case *gast.Text:
			b.Write(util.UnescapePunctuations(x.Value(src)))
		case *gast.String:
			b.Write(x.Value)
		}
		return gast.WalkContinue, nil
	})
	return b.String()
}

// HTML renders src as GFM.
func HTML(t testing.TB, src []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(src, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
