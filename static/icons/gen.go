//go:build ignore

// gen draws the app icons (a gatehouse: a house with an arched gate) as PNGs so
// no image editor or binary download is needed. Run: go generate ./static/
package main

import (
	"flag"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

var (
	bg   = color.NRGBA{0x17, 0x5c, 0xd3, 0xff}
	fg   = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	gate = color.NRGBA{0x17, 0x5c, 0xd3, 0xff}
)

// shape reports the colour at unit coordinates (0..1) of an icon whose artwork
// fills the inner `inset` fraction (maskable icons keep a safe margin).
func shape(x, y, inset float64, rounded bool) (color.NRGBA, bool) {
	if rounded {
		r := 0.18
		cx, cy := math.Max(r, math.Min(1-r, x)), math.Max(r, math.Min(1-r, y))
		if (x-cx)*(x-cx)+(y-cy)*(y-cy) > r*r {
			return color.NRGBA{}, false
		}
	}
	// Map into the artwork box.
	m := (1 - inset) / 2
	u, v := (x-m)/inset, (y-m)/inset
	inHouse := false
	switch {
	case u >= 0.2 && u <= 0.8 && v >= 0.45 && v <= 0.85: // walls
		inHouse = true
	case v >= 0.15 && v < 0.45: // roof: a triangle from (0.1,0.45) to (0.5,0.15) to (0.9,0.45)
		half := (v - 0.15) / 0.30 * 0.4
		inHouse = u >= 0.5-half && u <= 0.5+half
	}
	if !inHouse {
		return bg, true
	}
	// The arched gate: a rectangle topped by a half circle.
	gx, gr := 0.5, 0.13
	if u >= gx-gr && u <= gx+gr && v >= 0.62 && v <= 0.85 {
		return gate, true
	}
	if (u-gx)*(u-gx)+(v-0.62)*(v-0.62) <= gr*gr {
		return gate, true
	}
	return fg, true
}

func draw(size int, inset float64, rounded bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4 // supersampling for smooth edges
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/ss) / float64(size)
					y := (float64(py) + (float64(sy)+0.5)/ss) / float64(size)
					if c, ok := shape(x, y, inset, rounded); ok {
						r += float64(c.R)
						g += float64(c.G)
						b += float64(c.B)
						a += 255
					}
				}
			}
			n := float64(ss * ss)
			if a == 0 {
				continue
			}
			cov := a / n / 255
			img.SetNRGBA(px, py, color.NRGBA{uint8(r / n / cov), uint8(g / n / cov), uint8(b / n / cov), uint8(a / n)})
		}
	}
	return img
}

func main() {
	out := flag.String("out", ".", "directory to write the icons into")
	flag.Parse()
	icons := []struct {
		name    string
		size    int
		inset   float64
		rounded bool
	}{
		{"icon-192.png", 192, 0.86, true},
		{"icon-512.png", 512, 0.86, true},
		{"icon-maskable-512.png", 512, 0.62, false},
		{"apple-touch-icon.png", 180, 0.80, false},
		{"favicon-32.png", 32, 0.95, true},
	}
	for _, ic := range icons {
		f, err := os.Create(filepath.Join(*out, ic.name))
		if err != nil {
			log.Fatal(err)
		}
		if err := png.Encode(f, draw(ic.size, ic.inset, ic.rounded)); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}
