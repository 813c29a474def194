package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"os"
)

// A PNG says which frame it shows in a tEXt chunk (keyword stampKey, the
// frame's SHA-256): the staleness test compares it with the frame the code
// draws now, with no image tool and no font involved.
const stampKey = "vigil-frame"

func (f frame) sum() string {
	s := sha256.Sum256([]byte(f.text))
	return hex.EncodeToString(s[:])
}

var pngSig = []byte("\x89PNG\r\n\x1a\n")

// stampPNG puts the frame's sum into the PNG at path, before its IEND.
func stampPNG(path, sum string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	at := len(b) - 12 // the IEND chunk, last: its length, type and CRC
	if !bytes.HasPrefix(b, pngSig) || at < len(pngSig) || string(b[at+4:at+8]) != "IEND" {
		return errors.New(path + ": not a PNG")
	}
	data := append([]byte(stampKey+"\x00"), sum...)
	var chunk bytes.Buffer
	binary.Write(&chunk, binary.BigEndian, uint32(len(data)))
	chunk.WriteString("tEXt")
	chunk.Write(data)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("tEXt"), data...)))
	out := append(append(append([]byte{}, b[:at]...), chunk.Bytes()...), b[at:]...)
	return os.WriteFile(path, out, 0o644)
}

// readStamp is the frame sum a PNG carries ("" when none).
func readStamp(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !bytes.HasPrefix(b, pngSig) {
		return "", errors.New(path + ": not a PNG")
	}
	for p := len(pngSig); p+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[p:]))
		typ := string(b[p+4 : p+8])
		if p+12+n > len(b) {
			break
		}
		if data := b[p+8 : p+8+n]; typ == "tEXt" && bytes.HasPrefix(data, []byte(stampKey+"\x00")) {
			return string(data[len(stampKey)+1:]), nil
		}
		p += 12 + n
	}
	return "", nil
}
