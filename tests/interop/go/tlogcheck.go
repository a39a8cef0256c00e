// An independent check of the gateway's transparency-log output with Go's golang.org/x/mod/sumdb
// (Debian's golang-golang-x-mod-dev): signed notes with sumdb/note, RFC 6962 hashing and proofs
// with sumdb/tlog. It reads one JSON request on standard input and writes one JSON answer; the
// vitest suite (tests/interop/go-tlog.test.ts) builds it with GO111MODULE=off.
package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	// "tree": Go's roots and proofs over the leaves; "verify": check the gateway's notes and
	// proofs; "sign": a note signed by a fresh Go key.
	Mode string `json:"mode"`
	// Leaf data in hex (tree).
	Leaves []string `json:"leaves"`
	// Notes and verifier keys (verify); the text to sign (sign).
	Notes       []string `json:"notes"`
	VerifierKey string   `json:"verifierKey"`
	Text        string   `json:"text"`
	Name        string   `json:"name"`
	// Proofs to check (verify).
	Inclusions   []inclusion   `json:"inclusions"`
	Consistencies []consistency `json:"consistencies"`
}

type inclusion struct {
	Index    int64    `json:"index"`
	TreeSize int64    `json:"treeSize"`
	Leaf     string   `json:"leaf"`
	Root     string   `json:"root"`
	Hashes   []string `json:"hashes"`
}

type consistency struct {
	First      int64    `json:"first"`
	Second     int64    `json:"second"`
	FirstRoot  string   `json:"firstRoot"`
	SecondRoot string   `json:"secondRoot"`
	Hashes     []string `json:"hashes"`
}

type hashReader []tlog.Hash

func (h hashReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(h)) {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = h[x]
	}
	return out, nil
}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func hash(s string) tlog.Hash {
	var h tlog.Hash
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != len(h) {
		fail(fmt.Errorf("not a base64 hash: %q", s))
	}
	copy(h[:], b)
	return h
}

func hashes(list []string) []tlog.Hash {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		out[i] = hash(s)
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func tree(leaves []string) map[string]interface{} {
	var stored hashReader
	for i, l := range leaves {
		data, err := hex.DecodeString(l)
		if err != nil {
			fail(err)
		}
		more, err := tlog.StoredHashes(int64(i), data, stored)
		if err != nil {
			fail(err)
		}
		stored = append(stored, more...)
	}
	n := int64(len(leaves))
	roots := []string{}
	inclusions := map[string][]string{}
	consistencies := map[string][]string{}
	for size := int64(1); size <= n; size++ {
		root, err := tlog.TreeHash(size, stored)
		if err != nil {
			fail(err)
		}
		roots = append(roots, b64(root))
		for i := int64(0); i < size; i++ {
			p, err := tlog.ProveRecord(size, i, stored)
			if err != nil {
				fail(err)
			}
			list := []string{}
			for _, h := range p {
				list = append(list, b64(h))
			}
			inclusions[fmt.Sprintf("%d/%d", i, size)] = list
		}
		for first := int64(1); first <= size; first++ {
			p, err := tlog.ProveTree(size, first, stored)
			if err != nil {
				fail(err)
			}
			list := []string{}
			for _, h := range p {
				list = append(list, b64(h))
			}
			consistencies[fmt.Sprintf("%d/%d", first, size)] = list
		}
	}
	return map[string]interface{}{"roots": roots, "inclusions": inclusions, "consistencies": consistencies}
}

func verify(req request) map[string]interface{} {
	verifier, err := note.NewVerifier(req.VerifierKey)
	if err != nil {
		fail(err)
	}
	notes := []map[string]interface{}{}
	for _, text := range req.Notes {
		n, err := note.Open([]byte(text), note.VerifierList(verifier))
		if err != nil {
			notes = append(notes, map[string]interface{}{"ok": false, "error": err.Error()})
			continue
		}
		notes = append(notes, map[string]interface{}{"ok": true, "text": n.Text})
	}
	inclusions := []bool{}
	for _, p := range req.Inclusions {
		leaf := hash(p.Leaf)
		err := tlog.CheckRecord(hashes(p.Hashes), p.TreeSize, hash(p.Root), p.Index, leaf)
		inclusions = append(inclusions, err == nil)
	}
	consistencies := []bool{}
	for _, p := range req.Consistencies {
		err := tlog.CheckTree(hashes(p.Hashes), p.Second, hash(p.SecondRoot), p.First, hash(p.FirstRoot))
		consistencies = append(consistencies, err == nil)
	}
	return map[string]interface{}{"notes": notes, "inclusions": inclusions, "consistencies": consistencies}
}

func signNote(req request) map[string]interface{} {
	skey, vkey, err := note.GenerateKey(nil, req.Name)
	if err != nil {
		fail(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		fail(err)
	}
	signed, err := note.Sign(&note.Note{Text: req.Text}, signer)
	if err != nil {
		fail(err)
	}
	return map[string]interface{}{"verifierKey": vkey, "note": string(signed)}
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail(err)
	}
	var out map[string]interface{}
	switch req.Mode {
	case "tree":
		out = tree(req.Leaves)
	case "verify":
		out = verify(req)
	case "sign":
		out = signNote(req)
	default:
		fail(fmt.Errorf("unknown mode %q", req.Mode))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}
