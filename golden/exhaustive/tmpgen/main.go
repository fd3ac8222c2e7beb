package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/refimpl/unary"
)

func main() {
	for _, c := range unary.All() {
		p := "golden/exhaustive/digests/" + exhaustive.FileName(c.Name)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		t := time.Now()
		d, err := exhaustive.Compute(context.Background(), golden.Native{}, c.Name, 0, nil)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		b, _ := d.Marshal()
		os.WriteFile(p, b, 0o644)
		fmt.Println(c.Name, d.Root, time.Since(t))
	}
}
