// go_client ADDR SNI: one TLS handshake with Go's crypto/tls, for the capture.
package main

import (
	"crypto/tls"
	"os"
)

func main() {
	c, err := tls.Dial("tcp", os.Args[1], &tls.Config{ServerName: os.Args[2], InsecureSkipVerify: true})
	if err != nil {
		os.Exit(1)
	}
	c.Close()
}
