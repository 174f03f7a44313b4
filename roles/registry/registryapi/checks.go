package registryapi

import (
	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// ProposeBody is the canonical POST /registry/proposals body of req, what
// every Client implementation's Propose sends; an unencodable payload is
// 400 malformed, as the server would answer.
func ProposeBody(req descriptor.ProposeRequest) ([]byte, error) {
	b, err := descriptor.EncodePropose(req)
	if err != nil {
		return nil, errMalformed(descriptor.ReasonSyntax, "propose body: %v", err)
	}
	return b, nil
}

// ApprovalBody is the canonical POST /registry/approvals/{id} body of ap,
// what every Client implementation's Approve sends; an unencodable
// approval is 400 malformed.
func ApprovalBody(ap descriptor.Approval) ([]byte, error) {
	b, err := descriptor.EncodeApproval(ap)
	if err != nil {
		return nil, errMalformed(descriptor.ReasonSyntax, "approval body: %v", err)
	}
	return b, nil
}

// CheckArtifact parses version v's artifact bytes (the body of GET
// /registry/{version}) and checks its version and payload hash, as every
// Client implementation's Get does: 500 corrupt on any mismatch.
func CheckArtifact(v uint64, body []byte) (descriptor.Artifact, error) {
	art, err := descriptor.ParseArtifact(body)
	if err != nil {
		return art, errCorrupt("version %d: artifact does not parse: %s", v, httpx.AsError(err).Message)
	}
	if art.Version != v {
		return art, errCorrupt("asked for version %d, got %d", v, art.Version)
	}
	if got := descriptor.PayloadB3(art.Payload); got != art.PayloadB3 {
		return art, errCorrupt("version %d: payload hashes to %s, artifact says %s", v, got, art.PayloadB3)
	}
	return art, nil
}
