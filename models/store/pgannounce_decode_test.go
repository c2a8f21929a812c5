package store_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// fill sets every exported field reachable from v to a value that is not its
// zero, so a decoder that drops or reads any member differently shows.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x\u00e9\"<" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(9)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		if depth > 4 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 4 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 4 {
			return
		}
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 3, 18, 0, 0, 123456000, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// A replica reads another's NOTIFY payload exactly as encoding/json reads
// it, every member of the record included.
func TestDecodeChangeAsEncodingJSON(t *testing.T) {
	var full models.Request
	fill(reflect.ValueOf(&full).Elem(), 0)
	full.Options = []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	for _, ch := range []models.Change{
		{RequestID: "req_a", Version: 3, Status: "approved", Action: "decide", RuntimeID: "rt_1", Record: &full},
		{RequestID: "req_b", Version: 1, Status: "open", Action: "create"},
		{Action: models.ActionResync},
	} {
		payload, err := store.NotifyPayload(ch)
		if err != nil {
			t.Fatal(err)
		}
		var want models.Change
		if err := json.Unmarshal([]byte(payload), &want); err != nil {
			t.Fatal(err)
		}
		got, err := store.DecodeChange(payload)
		if err != nil {
			t.Fatalf("decode %s: %v", payload, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded differently from encoding/json:\n got  %+v\n want %+v\n payload %s", got, want, payload)
		}
		if ch.Record != nil && (got.Record == nil || !reflect.DeepEqual(*got.Record, *want.Record)) {
			t.Fatalf("the record did not come through alike (%d bytes of payload)", len(payload))
		}
	}
}
