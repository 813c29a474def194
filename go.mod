module github.com/vigil-run/vigil

go 1.26.8
