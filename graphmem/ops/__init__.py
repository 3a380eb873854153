"""Running graphmem: the HTTP server under the API (`http_server`), the job worker (`worker`)
and re-embedding a database (`reembed`)."""
