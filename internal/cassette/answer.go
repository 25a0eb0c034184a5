package cassette

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Answerer answers a case's model calls from its cassette (a
// model.Answerer): each request is compared with the recording (Begin)
// and answered as recorded, in order or by its content (Index), or, when
// the mode allows, sent live through the case's one live client
// (wire.Live) and kept (Keep), to be written by Save.
type Answerer struct {
	rec     *Recorder
	live    *wire.Live     // nil: nothing goes live
	answers []model.Answer // per interaction of the cassette read, ready to write
	index   *Index         // answered by content; nil: in order
	flight  sync.WaitGroup // live calls still answering
}

// NewAnswerer opens the case's cassette (Open) and answers from it; live
// sends what goes live (nil: nothing does). byContent answers a replay
// by content (a server several clients replay at once), coalesce writes a
// recorded stream in one piece (model.Answer.Coalesce).
func NewAnswerer(cfg Config, live *wire.Live, byContent, coalesce bool) (*Answerer, error) {
	rec, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	a := &Answerer{rec: rec, live: live}
	c := rec.Cassette()
	if c == nil {
		return a, nil
	}
	a.answers = make([]model.Answer, len(c.Interactions))
	for i := range c.Interactions {
		it := &c.Interactions[i]
		rs := &it.Response
		a.answers[i] = *model.NewAnswer(rs.Status, rs.Header["content-type"], rs.Body, rs.Events)
		a.answers[i].Replayed = true
		a.answers[i].Usage = wire.APIOf(it.Request.Path).Usage(&a.answers[i])
		if coalesce {
			a.answers[i].Coalesce()
		}
	}
	if byContent && (cfg.Mode == None || cfg.Mode == Once) {
		a.index = rec.Index()
	}
	return a, nil
}

// Replaying says whether a cassette read is replayed (else every call is
// recorded); ByContent, whether by content.
func (a *Answerer) Replaying() bool { return a.rec.Cassette() != nil }
func (a *Answerer) ByContent() bool { return a.index != nil }

// Answer implements model.Answerer.
func (a *Answerer) Answer(c *model.Call) (*model.Answer, error) {
	if a.index != nil {
		i, _, err := a.index.Find(c.HTTP, c.Body)
		if err != nil {
			return nil, err
		}
		return &a.answers[i], nil
	}
	// A client's own key is a secret from its first request on (whether
	// it is forwarded or not): learned before the request is
	// canonicalised for the cassette.
	if k := wire.ClientKey(c.HTTP); k != "" && !wire.IsDummy(k) {
		a.rec.AddSecret(k)
	}
	why := ""
	if a.live != nil {
		why = a.live.Unavailable(c)
	}
	x, err := a.rec.Begin(c.HTTP, c.Body, why)
	if err != nil {
		return nil, err
	}
	c.Placed = x
	if x.Recorded != nil {
		return &a.answers[x.Interaction], nil
	}
	return a.goLive(c, x), nil
}

// goLive answers a call live and keeps the exchange, once its answer has
// passed whole: not an answer the SDKs retry (429, 5xx, …: the retry is
// kept), nor a refused key (401, 403: the case records nothing), nor a
// stream cut short.
func (a *Answerer) goLive(c *model.Call, x *Exchange) *model.Answer {
	a.flight.Add(1)
	ans := a.live.Answer(c)
	if ans.Err != nil {
		a.flight.Done()
		return ans
	}
	ans.Ended = func(data []byte, err error) {
		defer a.flight.Done()
		ct := ans.Header.Get("Content-Type")
		switch {
		case err != nil:
			a.rec.Fail(fmt.Errorf("the streamed answer of %s was cut short: %v", ans.From, err))
			return
		case ans.Status == http.StatusUnauthorized || ans.Status == http.StatusForbidden:
			s := strings.TrimSpace(string(data))
			if len(s) > 300 {
				s = s[:300] + "…"
			}
			a.rec.Fail(fmt.Errorf("%s refused the key (%d): %s", ans.From, ans.Status, s))
		default:
			a.rec.Keep(x, ans.From, ans.Status, ct, data)
		}
		read := &model.Answer{Body: data}
		if ans.Streamed {
			read = &model.Answer{Events: SplitEvents(data)}
		}
		ans.Usage = c.Wire.Usage(read)
	}
	if ans.Live == nil {
		ans.Ended(ans.Body, nil)
	}
	return ans
}

// Unanswer implements model.Answerer: the exchange is taken back.
func (a *Answerer) Unanswer(c *model.Call) {
	if x, ok := c.Placed.(*Exchange); ok {
		a.rec.Unplay(x)
	}
}

// End implements model.Answerer.
func (a *Answerer) End(o *model.Outcome) {
	a.flight.Wait()
	if p := a.rec.Problem(); p != nil {
		o.Replay = p
	}
	o.Live = a.rec.Failure()
	if a.index == nil && o.Replay == nil && o.Live == nil {
		if u := a.rec.Unplayed(); u != nil {
			o.Unplayed = u
		}
	}
	o.Played, o.Recorded, o.Sent = a.rec.Stats()
}

// Save implements model.Answerer: the cassette is written when something
// was recorded.
func (a *Answerer) Save() (bool, error) {
	a.flight.Wait()
	return a.rec.Save()
}

// Reset implements model.Answerer: the cassette read is replayed again
// from its start, what was recorded and not saved is dropped.
func (a *Answerer) Reset() {
	a.flight.Wait()
	a.rec.Reset()
}
