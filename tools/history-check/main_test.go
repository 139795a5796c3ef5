package main

import (
	"strings"
	"testing"
	"time"
)

func check(t *testing.T, history string) Report {
	t.Helper()
	ops, err := Read(strings.NewReader(history))
	if err != nil {
		t.Fatal(err)
	}
	return Check(ops, 10*time.Second)
}

// A read that starts after write 2 was acknowledged and returns 1 is stale, and no order of the
// operations explains it: not linearizable.
func TestAStaleReadIsCountedAndNotLinearizable(t *testing.T) {
	r := check(t, `
{"process":0,"key":"a","f":"write","value":1,"invoke_ns":0,"complete_ns":10,"ok":true}
{"process":0,"key":"a","f":"write","value":2,"invoke_ns":20,"complete_ns":30,"ok":true}
{"process":1,"key":"a","f":"read","value":1,"invoke_ns":40,"complete_ns":50,"ok":true}
{"process":1,"key":"b","f":"read","value":0,"invoke_ns":40,"complete_ns":50,"ok":true}
`)
	if r.StaleReads != 1 || r.Reads != 2 || r.Writes != 2 || r.Keys != 2 {
		t.Fatalf("%+v", r)
	}
	if r.Linearizable != "no" || len(r.IllegalKeys) != 1 || r.IllegalKeys[0] != "a" {
		t.Fatalf("%+v", r)
	}
}

// A read concurrent with a write may return either version; one that starts after the write's
// acknowledgement must return it. A failed write may have taken effect: a later read of it is fine.
func TestConcurrentReadsAndAnUnknownWriteAreLinearizable(t *testing.T) {
	r := check(t, `
{"process":0,"key":"a","f":"write","value":1,"invoke_ns":0,"complete_ns":10,"ok":true}
{"process":0,"key":"a","f":"write","value":2,"invoke_ns":20,"complete_ns":30,"ok":true}
{"process":1,"key":"a","f":"read","value":1,"invoke_ns":15,"complete_ns":25,"ok":true}
{"process":2,"key":"a","f":"read","value":2,"invoke_ns":25,"complete_ns":35,"ok":true}
{"process":0,"key":"a","f":"write","value":3,"invoke_ns":40,"complete_ns":null,"ok":false,"error":"timeout"}
{"process":1,"key":"a","f":"read","value":null,"invoke_ns":45,"complete_ns":null,"ok":false,"error":"timeout"}
{"process":2,"key":"a","f":"read","value":3,"invoke_ns":50,"complete_ns":60,"ok":true}
`)
	if r.StaleReads != 0 || r.Linearizable != "yes" || r.Reads != 3 {
		t.Fatalf("%+v", r)
	}
}

// Monotonic reads broken across processes (one sees 2, a later one sees 1) with neither read stale
// by the acknowledgement rule (write 2 was still in flight): Porcupine still finds it.
func TestAReadGoingBackwardsIsNotLinearizable(t *testing.T) {
	r := check(t, `
{"process":0,"key":"a","f":"write","value":1,"invoke_ns":0,"complete_ns":10,"ok":true}
{"process":0,"key":"a","f":"write","value":2,"invoke_ns":20,"complete_ns":100,"ok":true}
{"process":1,"key":"a","f":"read","value":2,"invoke_ns":30,"complete_ns":40,"ok":true}
{"process":2,"key":"a","f":"read","value":1,"invoke_ns":50,"complete_ns":60,"ok":true}
`)
	if r.StaleReads != 0 || r.Linearizable != "no" {
		t.Fatalf("%+v", r)
	}
}

func TestBadLinesAreNamed(t *testing.T) {
	for _, bad := range []string{
		`{"process":0,"key":"a","f":"cas","value":1,"invoke_ns":0,"complete_ns":1,"ok":true}`,
		`{"process":0,"f":"read","value":1,"invoke_ns":0,"complete_ns":1,"ok":true}`,
		`{"process":0,"key":"a","f":"read","invoke_ns":0,"ok":true}`,
		`{"process":0,"key":"a","f":"write","value":1,"invoke_ns":5,"complete_ns":3,"ok":true}`,
		`not json`,
	} {
		if _, err := Read(strings.NewReader("\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
