// history-check reads a history of consistency-probe operations (JSON Lines, the format below and in
// docs/consistency.md) and checks it independently of scalebench: Porcupine
// (github.com/anishathalye/porcupine) decides whether each key's history is linearizable as a
// register, and the stale reads are counted again here from the raw operations, so that the
// count scalebench reports can be compared with one it did not make.
//
// One operation per line:
//
//	{"process":0,"key":"p3","f":"write","value":7,"invoke_ns":1200,"complete_ns":3400,"ok":true}
//	{"process":2,"key":"p3","f":"read","value":6,"invoke_ns":3500,"complete_ns":3900,"ok":true}
//
// value is the version written or read (0: the key was absent); each key has one writer, which
// writes versions 1, 2, 3, ... in order. A failed read says nothing and is skipped; a failed write
// may or may not have taken effect (its outcome is unknown), so it may be linearized at any point
// after its invocation. Times are nanoseconds on one monotonic clock.
//
// Usage: history-check [-timeout 60s] HISTORY.jsonl
// Prints one JSON object; exits 0 if linearizable, 1 if not, 2 on bad input or when the check did
// not finish within the timeout.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one line of a history.
type Op struct {
	Process    int     `json:"process"`
	Key        string  `json:"key"`
	F          string  `json:"f"`
	Value      *uint64 `json:"value"`
	InvokeNs   int64   `json:"invoke_ns"`
	CompleteNs *int64  `json:"complete_ns"`
	Ok         bool    `json:"ok"`
	Error      string  `json:"error,omitempty"`
}

// Report is what the checker prints.
type Report struct {
	Operations   int      `json:"operations"`
	Keys         int      `json:"keys"`
	Writes       int      `json:"writes"`
	Reads        int      `json:"reads"`
	StaleReads   int      `json:"stale_reads"`
	Linearizable string   `json:"linearizable"` // "yes", "no" or "unknown" (timed out)
	IllegalKeys  []string `json:"illegal_keys,omitempty"`
}

type registerInput struct {
	write bool
	value uint64
}

// register is Porcupine's model of one key: a write sets the version, a read returns it.
var register = porcupine.Model{
	Init: func() interface{} { return uint64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(registerInput)
		if in.write {
			return true, in.value
		}
		return output.(uint64) == state.(uint64), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(registerInput)
		if in.write {
			return fmt.Sprintf("write(%d)", in.value)
		}
		return fmt.Sprintf("read() -> %d", output.(uint64))
	},
}

// Read parses a history, refusing a line that is not an operation.
func Read(r io.Reader) ([]Op, error) {
	var ops []Op
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; scanner.Scan(); line++ {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(scanner.Bytes(), &op); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if op.F != "read" && op.F != "write" {
			return nil, fmt.Errorf("line %d: f is %q, expected read or write", line, op.F)
		}
		if op.Key == "" {
			return nil, fmt.Errorf("line %d: no key", line)
		}
		if op.Ok && (op.Value == nil || op.CompleteNs == nil) {
			return nil, fmt.Errorf("line %d: a completed operation needs value and complete_ns", line)
		}
		if op.F == "write" && op.Value == nil {
			return nil, fmt.Errorf("line %d: a write needs the version it wrote", line)
		}
		if op.CompleteNs != nil && *op.CompleteNs < op.InvokeNs {
			return nil, fmt.Errorf("line %d: complete_ns %d comes before invoke_ns %d", line, *op.CompleteNs, op.InvokeNs)
		}
		ops = append(ops, op)
	}
	return ops, scanner.Err()
}

// Check counts stale reads and runs Porcupine on every key.
func Check(ops []Op, timeout time.Duration) Report {
	report := Report{Operations: len(ops)}
	byKey := map[string][]Op{}
	for _, op := range ops {
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	report.Keys = len(byKey)
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	var history []porcupine.Operation
	for _, key := range keys {
		part := byKey[key]
		acked := acknowledgedWrites(part)
		for _, op := range part {
			if op.F == "write" {
				report.Writes++
			} else if op.Ok {
				report.Reads++
				if *op.Value < acked.before(op.InvokeNs) {
					report.StaleReads++
				}
			}
		}
		for _, op := range part {
			if op.F == "read" && !op.Ok {
				continue // a failed read observed nothing
			}
			ret := int64(math.MaxInt64) // a failed write: it may take effect at any time
			if op.Ok {
				ret = *op.CompleteNs
			}
			var output interface{} = uint64(0)
			if op.F == "read" {
				output = *op.Value
			}
			history = append(history, porcupine.Operation{
				ClientId: op.Process,
				Input:    registerInput{write: op.F == "write", value: valueOr0(op.Value)},
				Call:     op.InvokeNs,
				Output:   output,
				Return:   ret,
				Metadata: key,
			})
		}
	}
	model := register
	model.Partition = func(h []porcupine.Operation) [][]porcupine.Operation {
		parts := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			k := op.Metadata.(string)
			if _, seen := parts[k]; !seen {
				order = append(order, k)
			}
			parts[k] = append(parts[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, parts[k])
		}
		return out
	}
	switch porcupine.CheckOperationsTimeout(model, history, timeout) {
	case porcupine.Ok:
		report.Linearizable = "yes"
	case porcupine.Illegal:
		report.Linearizable = "no"
		for _, key := range keys {
			var one []porcupine.Operation
			for _, op := range history {
				if op.Metadata.(string) == key {
					one = append(one, op)
				}
			}
			if porcupine.CheckOperationsTimeout(register, one, timeout) == porcupine.Illegal {
				report.IllegalKeys = append(report.IllegalKeys, key)
			}
		}
	default:
		report.Linearizable = "unknown"
	}
	return report
}

// acknowledged answers "the newest version of the key acknowledged before t" for one key's
// operations: its acknowledged writes by completion time, with the newest version up to each.
type acknowledged struct {
	completes []int64
	newest    []uint64
}

func acknowledgedWrites(part []Op) acknowledged {
	var writes []Op
	for _, op := range part {
		if op.F == "write" && op.Ok {
			writes = append(writes, op)
		}
	}
	sort.Slice(writes, func(i, j int) bool { return *writes[i].CompleteNs < *writes[j].CompleteNs })
	var a acknowledged
	var newest uint64
	for _, w := range writes {
		if *w.Value > newest {
			newest = *w.Value
		}
		a.completes = append(a.completes, *w.CompleteNs)
		a.newest = append(a.newest, newest)
	}
	return a
}

func (a acknowledged) before(t int64) uint64 {
	n := sort.Search(len(a.completes), func(i int) bool { return a.completes[i] >= t })
	if n == 0 {
		return 0
	}
	return a.newest[n-1]
}

func valueOr0(v *uint64) uint64 {
	if v == nil {
		return 0
	}
	return *v
}

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "give up (linearizable: unknown) after this long")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: history-check [-timeout 60s] HISTORY.jsonl")
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	defer f.Close()
	ops, err := Read(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %s: %v\n", flag.Arg(0), err)
		os.Exit(2)
	}
	report := Check(ops, *timeout)
	out, _ := json.Marshal(report)
	fmt.Println(string(out))
	switch report.Linearizable {
	case "yes":
		os.Exit(0)
	case "no":
		os.Exit(1)
	default:
		os.Exit(2)
	}
}
