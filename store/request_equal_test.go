package store

import (
	"reflect"
	"testing"
	"time"
)

// Request.Equal names every field: one added to Request must be compared
// there too, or a request that changed only in it would be taken for the
// one already shown.
func TestRequestEqualComparesEveryField(t *testing.T) {
	if n := reflect.TypeOf(Request{}).NumField(); n != 25 {
		t.Errorf("Request has %d fields; Equal compares 25", n)
	}
	base := Request{ID: "1", Choices: []string{"a"}, PlanSteps: []PlanStep{{Intent: "x"}}, Ancestry: []string{"r"}}
	if !base.Equal(base) {
		t.Fatal("a request differs from itself")
	}
	typ := reflect.TypeOf(base)
	for i := 0; i < typ.NumField(); i++ {
		o := base
		f := reflect.ValueOf(&o).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "!")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Slice:
			f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
		case reflect.Struct:
			if f.Type() == reflect.TypeOf(RunLink{}) {
				f.Set(reflect.ValueOf(RunLink{CallID: "x"}))
				break
			}
			if f.Type() != reflect.TypeOf(time.Time{}) {
				t.Fatalf("%s: no way to change a %s", typ.Field(i).Name, f.Type())
			}
			f.Set(reflect.ValueOf(time.Unix(1, 0)))
		default:
			t.Fatalf("%s: no way to change a %s", typ.Field(i).Name, f.Type())
		}
		if base.Equal(o) {
			t.Errorf("requests that differ in %s are Equal", typ.Field(i).Name)
		}
	}
}
