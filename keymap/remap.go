package keymap

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// Remapping: a user's config names actions and the keys they want for
// them. Each binding's help shows its keys as bound, so the help overlay
// and the README table say what is true after a remap.

// actions names every binding a user may remap, by the name the config
// file uses.
func (k *KeyMap) actions() map[string]*key.Binding {
	a := map[string]*key.Binding{
		"next_pane": &k.NextPane, "prev_pane": &k.PrevPane, "zoom": &k.Zoom,
		"up": &k.Up, "down": &k.Down, "top": &k.Top, "bottom": &k.Bottom,
		"page_up": &k.PageUp, "page_down": &k.PageDown, "open": &k.Open, "back": &k.Back,
		"filter": &k.Filter, "sort": &k.Sort, "follow": &k.Follow, "summary": &k.Summary,
		"approve": &k.Approve, "approve_always": &k.ApproveAlways, "deny": &k.Deny, "deny_reason": &k.DenyReason, "answer": &k.Answer, "revise": &k.Revise,
		"confirm": &k.Confirm, "cancel": &k.Cancel, "decided": &k.Decided, "next_waiting": &k.NextWaiting,
		"search_next": &k.SearchNext, "search_prev": &k.SearchPrev, "step_filter": &k.StepFilter,
		"page": &k.Page, "edit": &k.Edit, "page_prompt": &k.PagePrompt, "copy": &k.Copy, "copy_prompt": &k.CopyPrompt,
		"submit": &k.Submit, "dismiss": &k.Dismiss, "complete": &k.Complete,
		"help": &k.Help, "quit": &k.Quit, "force_quit": &k.ForceQuit, "command": &k.Command,
	}
	for i := range k.Pane {
		a[fmt.Sprintf("pane_%d", i+1)] = &k.Pane[i]
	}
	return a
}

// Actions are the names a config may remap, sorted.
func Actions() []string {
	k := Default()
	names := make([]string, 0, 40)
	for n := range k.actions() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Binding is the binding an action name stands for (false: no such action).
func (k KeyMap) Binding(action string) (key.Binding, bool) {
	b, ok := k.actions()[action]
	if !ok {
		return key.Binding{}, false
	}
	return *b, true
}

// typing are the actions matched only while text is typed, where every
// other key is a letter: they may share keys with the rest (enter opens
// and submits), not with each other.
var typing = map[string]bool{"submit": true, "dismiss": true, "complete": true}

// Remap binds each named action to its keys, replacing the defaults. An
// unknown action, an empty key, or a key two actions would answer to is an
// error naming them; on error the keymap is unchanged.
func (k *KeyMap) Remap(m map[string][]string) error {
	next := *k
	acts := next.actions()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b, ok := acts[n]
		if !ok {
			return fmt.Errorf("keys.%s: no such action (one of: %s)", n, strings.Join(Actions(), ", "))
		}
		keys := m[n]
		if len(keys) == 0 {
			return fmt.Errorf("keys.%s: no key given", n)
		}
		for _, kk := range keys {
			if strings.TrimSpace(kk) == "" || kk != strings.TrimSpace(kk) {
				return fmt.Errorf("keys.%s: %q is not a key name (examples: \"a\", \"ctrl+x\", \"f2\", \"space\")", n, kk)
			}
		}
		*b = key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(keys, "/"), b.Help().Desc))
	}
	yieldDefaults(acts, m)
	if err := next.conflicts(m); err != nil {
		return err
	}
	*k = next
	return nil
}

// yielding are the actions added after configs were written with their
// default keys on other actions: such a config keeps working (approve =
// "A", from before A meant approve-always), and the newer action gives the
// key up. Every other default key a config takes is a conflict it is told.
var yielding = map[string]bool{"approve_always": true}

// yieldDefaults takes from the yielding actions the user left as they were
// the keys the user gave other actions, where both would act in the same
// place. An action left with no key is off.
func yieldDefaults(acts map[string]*key.Binding, remapped map[string][]string) {
	takenBy := map[string]string{}
	for n, keys := range remapped {
		for _, kk := range keys {
			takenBy[kk] = n
		}
	}
	for n, b := range acts {
		if _, mine := remapped[n]; mine || !yielding[n] {
			continue
		}
		var keep []string
		for _, kk := range b.Keys() {
			if by, ok := takenBy[kk]; ok && typing[by] == typing[n] && !allowedPair(by, n) {
				continue
			}
			keep = append(keep, kk)
		}
		if len(keep) == len(b.Keys()) {
			continue
		}
		desc := b.Help().Desc
		if len(keep) == 0 {
			*b = key.NewBinding(key.WithDisabled(), key.WithHelp("", desc))
			continue
		}
		*b = key.NewBinding(key.WithKeys(keep...), key.WithHelp(strings.Join(keep, "/"), desc))
	}
}

// conflicts finds a key two actions answer to in the same place.
func (k *KeyMap) conflicts(remapped map[string][]string) error {
	acts := k.actions()
	names := make([]string, 0, len(acts))
	for n := range acts {
		names = append(names, n)
	}
	sort.Strings(names)
	// Remapped actions first, so the error names the one the user changed.
	slices.SortStableFunc(names, func(a, b string) int {
		_, ra := remapped[a]
		_, rb := remapped[b]
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	owner := map[string]string{}
	for _, n := range names {
		for _, kk := range acts[n].Keys() {
			if prev, ok := owner[kk]; ok && typing[prev] == typing[n] && !allowedPair(prev, n) {
				return fmt.Errorf("keys: %q is bound to both %s and %s", kk, prev, n)
			}
			if _, ok := owner[kk]; !ok {
				owner[kk] = n
			}
		}
	}
	return nil
}

// allowedPair: bindings that may share a key because they never act in the
// same place. Confirm and cancel answer only an open y/n prompt, where back
// (and force_quit) act too, so those they may not share.
func allowedPair(a, b string) bool {
	prompt := map[string]bool{"confirm": true, "cancel": true}
	also := map[string]bool{"back": true, "force_quit": true}
	if prompt[a] == prompt[b] {
		return false
	}
	other := a
	if prompt[a] {
		other = b
	}
	return !also[other]
}

// actionOf is the action name of one of the keymap's bindings.
func (k KeyMap) actionOf(b key.Binding) string {
	for n, a := range k.actions() {
		if a.Help() == b.Help() && slices.Equal(a.Keys(), b.Keys()) {
			return n
		}
	}
	return ""
}
