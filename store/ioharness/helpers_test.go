package ioharness

import "errors"

func isKind(err, kind error) bool { return err != nil && errors.Is(err, kind) }
