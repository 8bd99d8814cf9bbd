// SPDX-License-Identifier: GPL-2.0-or-later
// corpus: the checked-in cases as JSON lines: test/fixtures/gotmpl/*.json (each case with its
// data, set "t" as test/unit/test_gotmpl.c runs them) and fuzz seed files (each a template's
// bytes, run over gen.go's NFD data as fuzz_gotmpl_exec runs them).
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

type line struct {
	Name    string          `json:"name"`
	Tmpl    *string         `json:"tmpl,omitempty"`
	TmplHex string          `json:"tmplhex,omitempty"`
	Set     string          `json:"set,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func corpus(w io.Writer, paths []string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var data bytes.Buffer
	if err := json.Compact(&data, []byte(nfdData)); err != nil {
		return err
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".json") {
			var cases []struct {
				Name string          `json:"name"`
				Tmpl string          `json:"tmpl"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(b, &cases); err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
			for i, c := range cases {
				tmpl := c.Tmpl
				l := line{Name: fmt.Sprintf("%s[%d]", filepath.Base(p), i), Tmpl: &tmpl,
					Set: "t", Data: c.Data}
				if err := enc.Encode(&l); err != nil {
					return err
				}
			}
			continue
		}
		l := line{Name: filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p),
			TmplHex: hex.EncodeToString(b), Data: data.Bytes()}
		if err := enc.Encode(&l); err != nil {
			return err
		}
	}
	return nil
}
