module github.com/musterhq/muster/third_party/xterm

go 1.26
