package views

import (
	"reflect"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// sameApprovalItem names every field: one added to an item or a request
// must be compared there too, or a queue that changed only in it would be
// drawn as it was.
func TestSameApprovalItemComparesEveryField(t *testing.T) {
	if n := reflect.TypeOf(ApprovalItem{}).NumField(); n != 6 {
		t.Errorf("ApprovalItem has %d fields; sameApprovalItem compares 6", n)
	}
	// Each field changed alone makes the items differ.
	base := ApprovalItem{Req: store.Request{ID: "1", Choices: []string{"a"}, PlanSteps: []store.PlanStep{{Intent: "x"}}, Ancestry: []string{"r"}}}
	if !sameApprovalItem(base, base) {
		t.Fatal("an item differs from itself")
	}
	req := reflect.TypeOf(store.Request{})
	for i := 0; i < req.NumField(); i++ {
		b := base
		f := reflect.ValueOf(&b.Req).Elem().Field(i)
		change(t, req.Field(i).Name, f)
		if sameApprovalItem(base, b) {
			t.Errorf("items that differ in Req.%s compare the same", req.Field(i).Name)
		}
	}
	item := reflect.TypeOf(ApprovalItem{})
	for i := 0; i < item.NumField(); i++ {
		if item.Field(i).Name == "Req" {
			continue
		}
		b := base
		change(t, item.Field(i).Name, reflect.ValueOf(&b).Elem().Field(i))
		if sameApprovalItem(base, b) {
			t.Errorf("items that differ in %s compare the same", item.Field(i).Name)
		}
	}
}

// change sets a field to a value unlike base's.
func change(t *testing.T, name string, f reflect.Value) {
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "!")
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int, reflect.Int64:
		f.SetInt(f.Int() + 1)
	case reflect.Slice:
		f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
	case reflect.Struct:
		if f.Type() == reflect.TypeOf(store.RunLink{}) {
			f.Set(reflect.ValueOf(store.RunLink{CallID: "x"}))
			return
		}
		if f.Type() != reflect.TypeOf(time.Time{}) {
			t.Fatalf("%s: no way to change a %s", name, f.Type())
		}
		f.Set(reflect.ValueOf(time.Unix(1, 0)))
	default:
		t.Fatalf("%s: no way to change a %s", name, f.Type())
	}
}
