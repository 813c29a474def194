package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The image tools are built with the go command in a scratch module, so
// they stay out of vigil's go.mod (the module proxy is all they need).
// freeze v0.2.2 pins a wazero that crashes on Go 1.26: the module lifts it.
// freeze's own PNG step loads JetBrains Mono alone, which has no ⇄ (the
// decided list's key): svg2png converts freeze's SVG with resvg, the
// library freeze uses, with DejaVu Sans Mono loaded too, where resvg finds
// the glyphs JetBrains Mono lacks.
var toolModules = []string{
	"github.com/charmbracelet/freeze@v0.2.2",
	"github.com/tetratelabs/wazero@v1.12.0",
	"github.com/go-fonts/dejavu@v0.3.2",
}

type tools struct{ freeze, svg2png string }

func buildTools(dir string) (tools, error) {
	mod := filepath.Join(dir, "tools-mod")
	if err := os.MkdirAll(filepath.Join(mod, "svg2png"), 0o755); err != nil {
		return tools{}, err
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module vigilshots\n\ngo 1.26\n"), 0o644); err != nil {
		return tools{}, err
	}
	if err := os.WriteFile(filepath.Join(mod, "svg2png", "main.go"), []byte(svg2pngSource), 0o644); err != nil {
		return tools{}, err
	}
	t := tools{freeze: filepath.Join(dir, "freeze"), svg2png: filepath.Join(dir, "svg2png")}
	for _, args := range [][]string{
		append([]string{"get"}, toolModules...),
		{"build", "-o", t.freeze, "github.com/charmbracelet/freeze"},
		{"build", "-o", t.svg2png, "./svg2png"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if b, err := cmd.CombinedOutput(); err != nil {
			return tools{}, fmt.Errorf("go %s: %v\n%s", args[0], err, b)
		}
	}
	return t, nil
}

// svg2pngSource renders freeze's SVG at four times its size, as freeze's
// own PNG output does.
const svg2pngSource = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/charmbracelet/freeze/font"
	"github.com/go-fonts/dejavu/dejavusansmono"
	"github.com/kanrichan/resvg-go"
)

func main() {
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "svg2png:", err)
		os.Exit(1)
	}
}

func convert(in, out string) error {
	svg, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	wk, err := resvg.NewDefaultWorker(context.Background())
	if err != nil {
		return err
	}
	defer wk.Close()
	db, err := wk.NewFontDBDefault()
	if err != nil {
		return err
	}
	defer db.Close()
	for _, f := range [][]byte{font.JetBrainsMonoTTF, font.JetBrainsMonoNLTTF, dejavusansmono.TTF} {
		if err := db.LoadFontData(f); err != nil {
			return err
		}
	}
	tree, err := wk.NewTreeFromData(svg, &resvg.Options{Dpi: 192, ShapeRenderingMode: resvg.ShapeRenderingModeGeometricPrecision,
		TextRenderingMode: resvg.TextRenderingModeOptimizeLegibility, ImageRenderingMode: resvg.ImageRenderingModeOptimizeQuality})
	if err != nil {
		return err
	}
	defer tree.Close()
	if err := tree.ConvertText(db); err != nil {
		return err
	}
	w, h, err := tree.GetSize()
	if err != nil {
		return err
	}
	const scale = 4
	pix, err := wk.NewPixmap(uint32(w*scale), uint32(h*scale))
	if err != nil {
		return err
	}
	defer pix.Close()
	if err := tree.Render(resvg.TransformFromScale(scale, scale), pix); err != nil {
		return err
	}
	png, err := pix.EncodePNG()
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}
`
