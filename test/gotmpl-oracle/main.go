// SPDX-License-Identifier: GPL-2.0-or-later
// gotmpl-oracle: Go's text/template with Sprig, as nfd-master runs a rule's template, over a
// file of cases; the reference pkg/gotmpl is compared with (test/bats/gotmpl-oracle.bats).
//
// Usage: gotmpl-oracle run CASES.jsonl   (one result line per case, as test/tools/gotmpl-run)
//
//	gotmpl-oracle gen SEED N           (N generated cases as JSON lines, gen.go)
//	gotmpl-oracle corpus FILE...       (fixture and fuzz seed files as cases, corpus.go)
//	gotmpl-oracle compare GO NP ALLOW OPEN (the two programs' results, compare.go)
//
// The template runs as NFD v0.19's pkg/apis/nfd/template NewHelper does:
// template.New(name).Funcs(sprig's map).Option("missingkey=error").Parse(src), then Execute
// into a buffer; the map is Sprig's TxtFuncMap without env, expandenv and getHostByName, as
// nodeprobe's README says of NFD v0.19. Built in GOPATH mode over Debian's packages
// (golang-go, golang-github-masterminds-sprig-dev): nothing is fetched.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig" // sprig/v3: GOPATH mode names it without /v3
)

// fromJSON: template data from the decoded JSON, as test/tools/gotmpl_json.h builds it: an
// integral number is an int, {"$strmap"} a map[string]string, {"$strlist"} a []string,
// {"$int64"} an int64, {"$float"} a float64.
func fromJSON(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		if m, ok := x["$strmap"]; ok {
			if mm, ok := m.(map[string]interface{}); ok {
				out := map[string]string{}
				for k, e := range mm {
					out[k], _ = e.(string)
				}
				return out
			}
		}
		if l, ok := x["$strlist"]; ok {
			if ll, ok := l.([]interface{}); ok {
				out := []string{}
				for _, e := range ll {
					s, _ := e.(string)
					out = append(out, s)
				}
				return out
			}
		}
		if n, ok := x["$int64"]; ok {
			i, _ := n.(json.Number).Int64()
			return i
		}
		if n, ok := x["$float"]; ok {
			f, _ := n.(json.Number).Float64()
			return f
		}
		out := map[string]interface{}{}
		for k, e := range x {
			out[k] = fromJSON(e)
		}
		return out
	case []interface{}:
		out := []interface{}{}
		for _, e := range x {
			out = append(out, fromJSON(e))
		}
		return out
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			i, err := strconv.ParseInt(string(x), 10, 64)
			if err == nil {
				return int(i)
			}
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// escape: printable ASCII as is, '\' doubled, every other byte \xNN (gotmpl-run's put_escaped).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}

func funcMap() template.FuncMap {
	m := sprig.TxtFuncMap()
	delete(m, "env")
	delete(m, "expandenv")
	delete(m, "getHostByName")
	return m
}

type result struct{ kind, text string }

func execute(fm template.FuncMap, set, src string, data interface{}) (res result) {
	defer func() {
		if r := recover(); r != nil {
			res = result{"err", fmt.Sprint("panic: ", r)}
		}
	}()
	t, err := template.New(set).Funcs(fm).Option("missingkey=error").Parse(src)
	if err != nil {
		return result{"err", err.Error()}
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return result{"err", err.Error()}
	}
	return result{"ok", out.String()}
}

type tcase struct {
	Name    string      `json:"name"`
	Tmpl    *string     `json:"tmpl"`
	TmplHex string      `json:"tmplhex"`
	Set     string      `json:"set"`
	Data    interface{} `json:"data"`
}

func run(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fm := funcMap()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for sc.Scan() {
		var c tcase
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		if err := d.Decode(&c); err != nil {
			return err
		}
		src := ""
		if c.Tmpl != nil {
			src = *c.Tmpl
		} else if b, err := hex.DecodeString(c.TmplHex); err == nil {
			src = string(b)
		}
		// A case Go does not finish in 5 s: reported, and left running (nodeprobe's step
		// budget ends such a template; the comparison counts it under its limits).
		done := make(chan result, 1)
		go func() { done <- execute(fm, c.Set, src, fromJSON(c.Data)) }()
		var r result
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			r = result{"timeout", "Go did not finish in 5 s"}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.Name, r.kind, escape(r.text))
	}
	return sc.Err()
}

func main() {
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "run":
		err = run(os.Args[2])
	case len(os.Args) == 6 && os.Args[1] == "compare":
		err = compare(os.Stdout, os.Args[2], os.Args[3], os.Args[4], os.Args[5])
	case len(os.Args) >= 2 && os.Args[1] == "corpus":
		err = corpus(os.Stdout, os.Args[2:])
	case len(os.Args) == 4 && os.Args[1] == "gen":
		seed, e1 := strconv.ParseInt(os.Args[2], 10, 64)
		n, e2 := strconv.Atoi(os.Args[3])
		if e1 != nil || e2 != nil {
			err = fmt.Errorf("bad SEED or N")
		} else if n < 0 {
			err = fmt.Errorf("bad N")
		} else {
			err = generate(os.Stdout, seed, n)
		}
	default:
		err = fmt.Errorf("usage: gotmpl-oracle run CASES.jsonl | gen SEED N | corpus FILE... | compare GO NP ALLOW OPEN")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotmpl-oracle:", err)
		os.Exit(2)
	}
}
