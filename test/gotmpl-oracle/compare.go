// SPDX-License-Identifier: GPL-2.0-or-later
// compare: Go's result lines against nodeprobe's (test/tools/gotmpl-run), case by case.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// excuse: one allow-list entry: a difference by name, the shape of Go 1.19's line and of
// nodeprobe's line ("KIND<TAB>TEXT", regexps), and why nodeprobe differs.
type excuse struct {
	name, reason string
	goRe, npRe   *regexp.Regexp
	used         int
}

// readExcuses: allow.txt: "NAME<TAB>GO-REGEXP<TAB>NODEPROBE-REGEXP<TAB>REASON" lines, '#'
// comments and blank lines skipped.
func readExcuses(path string) ([]*excuse, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*excuse
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		p := strings.Split(l, "\t")
		if len(p) != 4 || p[3] == "" {
			return nil, fmt.Errorf("%s:%d: want NAME, GO-REGEXP, NODEPROBE-REGEXP, REASON", path, n)
		}
		g, err1 := regexp.Compile("^(?:" + p[1] + ")$")
		c, err2 := regexp.Compile("^(?:" + p[2] + ")$")
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: bad regexp", path, n)
		}
		out = append(out, &excuse{name: p[0], reason: p[3], goRe: g, npRe: c})
	}
	return out, sc.Err()
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// compare: each case's two lines; prints the agreement and every difference no allow-list
// entry excuses; returns an error when there is one, or when the files do not pair up.
func compare(w io.Writer, goOut, npOut, allow, open string) error {
	gl, err := readLines(goOut)
	if err != nil {
		return err
	}
	nl, err := readLines(npOut)
	if err != nil {
		return err
	}
	ex, err := readExcuses(allow)
	if err != nil {
		return err
	}
	openNames := map[string]bool{}
	if ol, err := readLines(open); err == nil {
		for _, l := range ol {
			if l != "" && l[0] != '#' {
				openNames[l] = true
			}
		}
	} else {
		return err
	}
	if len(gl) != len(nl) {
		return fmt.Errorf("%d Go results, %d nodeprobe results", len(gl), len(nl))
	}
	same, excused, bad, opened := 0, 0, 0, 0
	for i := range gl {
		g := strings.SplitN(gl[i], "\t", 2)
		n := strings.SplitN(nl[i], "\t", 2)
		if len(g) != 2 || len(n) != 2 || g[0] != n[0] {
			return fmt.Errorf("line %d: cases do not pair up", i+1)
		}
		if g[1] == n[1] {
			same++
			continue
		}
		var e *excuse
		for _, x := range ex {
			if x.goRe.MatchString(g[1]) && x.npRe.MatchString(n[1]) {
				e = x
				break
			}
		}
		if e != nil {
			e.used++
			excused++
			continue
		}
		if openNames[g[0]] {
			opened++
			continue
		}
		bad++
		fmt.Fprintf(w, "differs: %s\n  go:        %s\n  nodeprobe: %s\n", g[0], g[1], n[1])
	}
	total := len(gl)
	fmt.Fprintf(w, "# %d cases: %d agree (%.2f%%), %d differ as allow-listed, %d still open (open.txt), %d new; agreement outside the allow-list %.2f%%\n",
		total, same, 100*float64(same)/float64(total), excused, opened, bad,
		100*float64(same)/float64(total-excused))
	for _, x := range ex {
		fmt.Fprintf(w, "# allow-list %s: %d\n", x.name, x.used)
	}
	if bad > 0 {
		return fmt.Errorf("%d differences outside the allow-list", bad)
	}
	return nil
}
