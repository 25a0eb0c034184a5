package jsonschema

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	gourl "net/url"
	"strings"
)

// --

//go:embed metaschemas
var metaFS embed.FS

func openMeta(url string) (fs.File, error) {
	u, meta := strings.CutPrefix(url, "http://json-schema.org/")
	if !meta {
		u, meta = strings.CutPrefix(url, "https://json-schema.org/")
	}
	if meta {
		if u == "schema" {
			return openMeta(draftLatest.url)
		}
		f, err := metaFS.Open("metaschemas/" + u)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			return nil, err
		}
		return f, err
	}
	return nil, nil

}

func isMeta(url string) bool {
	f, err := openMeta(url)
	if err != nil {
		return true
	}
	if f != nil {
		f.Close()
		return true
	}
	return false
}

func loadMeta(url string) (any, error) {
	f, err := openMeta(url)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, nil
	}
	defer f.Close()
	return UnmarshalJSON(f)
}

// --

type defaultLoader struct {
	docs map[url]any // docs loaded so far
}

func (l *defaultLoader) add(url url, doc any) bool {
	if _, ok := l.docs[url]; ok {
		return false
	}
	l.docs[url] = doc
	return true
}

func (l *defaultLoader) load(url url) (any, error) {
	if doc, ok := l.docs[url]; ok {
		return doc, nil
	}
	doc, err := loadMeta(url.String())
	if err != nil {
		return nil, err
	}
	if doc != nil {
		l.add(url, doc)
		return doc, nil
	}
	// dryfire: no loader; a suite never reaches the network or the file
	// system through a schema.
	return nil, fmt.Errorf("failing loading %q: external $ref %q is not allowed", url, url)
}

func (l *defaultLoader) getDraft(up urlPtr, doc any, defaultDraft *Draft, cycle map[url]struct{}) (*Draft, error) {
	obj, ok := doc.(map[string]any)
	if !ok {
		return defaultDraft, nil
	}
	sch, ok := strVal(obj, "$schema")
	if !ok {
		return defaultDraft, nil
	}
	if draft := draftFromURL(sch); draft != nil {
		return draft, nil
	}
	sch, _ = split(sch)
	if _, err := gourl.Parse(sch); err != nil {
		return nil, fmt.Errorf("invalid $schema in %q: %w", up.String(), err)
	}
	schUrl := url(sch)
	if up.ptr.isEmpty() && schUrl == up.url {
		return nil, fmt.Errorf("draft %q is not supported", schUrl)
	}
	if _, ok := cycle[schUrl]; ok {
		return nil, fmt.Errorf("cycle in resolving $schema in %q", schUrl)
	}
	cycle[schUrl] = struct{}{}
	doc, err := l.load(schUrl)
	if err != nil {
		return nil, err
	}
	return l.getDraft(urlPtr{schUrl, ""}, doc, defaultDraft, cycle)
}

// --

// UnmarshalJSON unmarshals into [any] without losing
// number precision using [json.Number].
func UnmarshalJSON(r io.Reader) (any, error) {
	decoder := json.NewDecoder(r)
	decoder.UseNumber()
	var doc any
	if err := decoder.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err == nil || err != io.EOF {
		return nil, fmt.Errorf("invalid character after top-level value")
	}
	return doc, nil
}
