package mcpserver

// Tags: set, list and delete.

import (
	"context"
	"fmt"
	"time"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

// TagOutput is a tag's new state.
type TagOutput struct {
	URI              string    `json:"uri"`
	Tag              string    `json:"tag"`
	Reference        string    `json:"reference" jsonschema:"the URI@TAG to read the tagged snapshot by"`
	Snapshot         string    `json:"snapshot,omitempty"`
	ContentHash      string    `json:"content_hash,omitempty"`
	PreviousSnapshot string    `json:"previous_snapshot,omitempty" jsonschema:"where the tag pointed before this move"`
	Deleted          bool      `json:"deleted"`
	SetAt            time.Time `json:"set_at"`
	Receipt
}

func tagOutput(t *store.TagState) *TagOutput {
	return &TagOutput{URI: t.URI, Tag: t.Tag, Reference: t.Reference(), Snapshot: t.Snapshot, ContentHash: t.ContentHash,
		PreviousSnapshot: t.PreviousSnapshot, Deleted: t.Deleted, SetAt: t.SetAt}
}

// uriAndTag takes the tag from uri@tag or from tag.
func uriAndTag(uri, tag string) (identity.URI, string, error) {
	u, err := identity.ParseURI(uri)
	if err != nil {
		return u, "", hint.With(err, identity.URIHint(uri, true))
	}
	t := u.Tag
	u.Tag = ""
	switch {
	case t != "" && tag != "" && t != tag:
		return u, "", hint.With(fmt.Errorf("%s names tag %q but tag is %q", uri, t, tag), "give the tag once, in uri or in tag")
	case t == "" && tag == "":
		return u, "", hint.With(fmt.Errorf("%s: no tag given", uri), "pass tag, or write the URI as URI@TAG")
	case t == "":
		t = tag
	}
	if err := identity.ValidateTag(t); err != nil {
		return u, "", hint.With(err, "tag names are letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters")
	}
	return u, t, nil
}

func (s *Server) tagSet(_ context.Context, c *call, in TagSetInput) (*TagOutput, reply, error) {
	u, tag, err := uriAndTag(in.URI, in.Tag)
	if err != nil {
		return nil, reply{}, err
	}
	t, err := c.st.SetTag(u, tag, in.Snapshot)
	if err != nil {
		return nil, reply{}, err
	}
	return tagOutput(t), reply{text: fmt.Sprintf("Tagged %s -> snapshot %s (%s). Read it as %s.", t.Reference(), t.Snapshot, t.ContentHash, t.Reference())}, nil
}

// TagItem is one live tag.
type TagItem struct {
	Tag         string    `json:"tag"`
	Reference   string    `json:"reference" jsonschema:"the URI@TAG to read it by"`
	Snapshot    string    `json:"snapshot"`
	ContentHash string    `json:"content_hash"`
	SetAt       time.Time `json:"set_at"`
}

// TagListOutput lists a resource's tags.
type TagListOutput struct {
	URI  string    `json:"uri"`
	Tags []TagItem `json:"tags"`
	Receipt
}

func (s *Server) tagList(_ context.Context, c *call, in PlainURIInput) (*TagListOutput, reply, error) {
	u, err := plainURI(in.URI)
	if err != nil {
		return nil, reply{}, err
	}
	tags, err := c.st.ListTags(u)
	if err != nil {
		return nil, reply{}, err
	}
	out := &TagListOutput{URI: u.String(), Tags: []TagItem{}}
	var refs []string
	for _, t := range tags {
		out.Tags = append(out.Tags, TagItem{Tag: t.Tag, Reference: t.Reference(), Snapshot: t.Snapshot, ContentHash: t.ContentHash, SetAt: t.SetAt})
		refs = append(refs, t.Reference()+" -> "+manifest.Short(t.Snapshot))
	}
	text := u.String() + " has no tags; set one with readproof_tag_set."
	if len(refs) > 0 {
		text = fmt.Sprintf("%s has %d tag%s: %s", u, len(refs), plural(len(refs)), some(refs, ", "))
	}
	return out, reply{text: text}, nil
}

func (s *Server) tagDelete(_ context.Context, c *call, in TagInput) (*TagOutput, reply, error) {
	u, tag, err := uriAndTag(in.URI, in.Tag)
	if err != nil {
		return nil, reply{}, err
	}
	t, err := c.st.DeleteTag(u, tag)
	if err != nil {
		return nil, reply{}, err
	}
	return tagOutput(t), reply{text: fmt.Sprintf("Deleted %s; the snapshot stays and manifests that mounted it still replay.", t.Reference())}, nil
}
