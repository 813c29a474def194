package serve

import (
	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// agentRequest asks the server to forward the client's ssh-agent. vigil
// serve never uses one, and the session handler of charm.land/ssh accepts
// it unasked: refused here, so a client's agent is never offered to the
// server.
const agentRequest = "auth-agent-req@openssh.com"

// refuseAgent is the session handler with every agent forwarding request
// of its channel refused.
func refuseAgent(next ssh.ChannelHandler) ssh.ChannelHandler {
	return func(srv *ssh.Server, conn *gossh.ServerConn, ch gossh.NewChannel, ctx ssh.Context) {
		next(srv, conn, noAgentChannel{ch}, ctx)
	}
}

type noAgentChannel struct{ gossh.NewChannel }

func (c noAgentChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	go func() {
		defer close(out)
		for r := range reqs {
			if r.Type == agentRequest {
				r.Reply(false, nil)
				continue
			}
			out <- r
		}
	}()
	return ch, out, nil
}
