package mock

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Video generation, SGLang's asynchronous jobs: POST /v1/videos submits
// (the prompt prefilled as any other), the job completes --ttft plus
// --video-gen-ms-per-frame per frame later (frames: num_frames, else
// seconds × fps, by default 4 s at 16 fps), GET /v1/videos/{id} reports
// it and GET /v1/videos/{id}/content serves the video (a header-only MP4
// of the job's size and duration).

// maxVideoJobs bounds the jobs kept; the oldest go first.
const maxVideoJobs = 10000

type videoJob struct {
	id            string
	created, due  time.Time
	width, height int
	seconds       float64
	frames        int
}

type videoJobs struct {
	mu    sync.Mutex
	jobs  map[string]*videoJob
	order []string
}

// submitVideo serves POST /v1/videos.
func (s *Server) submitVideo(w http.ResponseWriter, r *http.Request) {
	x := s.beginRequest(r)
	defer x.end()
	if !s.admitKey(w, r, x) {
		return
	}
	var raw map[string]json.RawMessage
	if err := decodeBody(http.MaxBytesReader(w, r.Body, maxRequestBytes), &raw); err != nil {
		x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
		return
	}
	job, err := s.newVideoJob(raw)
	if err != nil {
		x.fail(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if s.injectError() {
		x.fail(w, http.StatusInternalServerError, "InternalServerError", "injected by --error-rate")
		return
	}
	s.videos.mu.Lock()
	if s.videos.jobs == nil {
		s.videos.jobs = map[string]*videoJob{}
	}
	if len(s.videos.order) >= maxVideoJobs {
		delete(s.videos.jobs, s.videos.order[0])
		s.videos.order = s.videos.order[1:]
	}
	s.videos.jobs[job.id], s.videos.order = job, append(s.videos.order, job.id)
	s.videos.mu.Unlock()
	x.status = http.StatusOK
	x.end()
	writeJSON(w, http.StatusOK, job.status(time.Now(), r))
}

// newVideoJob reads a submit: size (WxH, default 832x480), seconds (4),
// fps (16) or num_frames.
func (s *Server) newVideoJob(raw map[string]json.RawMessage) (*videoJob, error) {
	var prompt, size string
	if err := json.Unmarshal(raw["prompt"], &prompt); err != nil || prompt == "" {
		return nil, fmt.Errorf("prompt is required")
	}
	_ = json.Unmarshal(raw["size"], &size)
	j := &videoJob{id: "video_" + strconv.FormatUint(s.nextID.Add(1), 16), created: time.Now(), width: 832, height: 480, seconds: 4}
	if size != "" {
		var err error
		if j.width, j.height, err = parseSize(size); err != nil {
			return nil, err
		}
	}
	if v := number(raw["seconds"]); v > 0 {
		j.seconds = v
	}
	fps := 16.0
	if v := number(raw["fps"]); v > 0 {
		fps = v
	}
	j.frames = int(j.seconds * fps)
	if v := number(raw["num_frames"]); v > 0 {
		j.frames = int(v)
	}
	if j.frames < 1 || j.frames > 100000 {
		return nil, fmt.Errorf("%d frames: expected 1 to 100000", j.frames)
	}
	gen := time.Duration(0)
	if !s.cfg.Fast {
		gen = addDelay(msDuration(s.cfg.TTFT), msDuration(float64(j.frames)*s.cfg.VideoGenMSPerFrame))
	}
	j.due = j.created.Add(gen)
	return j, nil
}

// number reads a JSON number or a string holding one (OpenAI sends
// seconds as a string); 0 when neither.
func number(raw json.RawMessage) float64 {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return f
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		f, _ = strconv.ParseFloat(s, 64)
	}
	return f
}

// status is the job's status reply at now.
func (j *videoJob) status(now time.Time, r *http.Request) map[string]any {
	m := map[string]any{"id": j.id, "object": "video", "created_at": j.created.Unix(),
		"size": fmt.Sprintf("%dx%d", j.width, j.height), "seconds": strconv.FormatFloat(j.seconds, 'f', -1, 64)}
	if now.Before(j.due) {
		total := j.due.Sub(j.created)
		m["status"], m["progress"] = "in_progress", int(100*now.Sub(j.created)/max(1, total))
		return m
	}
	m["status"], m["progress"], m["completed_at"] = "completed", 100, j.due.Unix()
	m["url"] = "http://" + r.Host + "/v1/videos/" + j.id + "/content"
	m["inference_time_s"] = j.due.Sub(j.created).Seconds()
	m["peak_memory_mb"] = 1024 + float64(j.width*j.height*j.frames)/1e5
	return m
}

// videoStatus serves GET /v1/videos/{id} and GET /v1/videos/{id}/content.
func (s *Server) videoStatus(content bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "missing or invalid API key")
			return
		}
		s.videos.mu.Lock()
		j := s.videos.jobs[r.PathValue("id")]
		s.videos.mu.Unlock()
		now := time.Now()
		switch {
		case j == nil:
			writeError(w, http.StatusNotFound, "invalid_request_error", "no video job "+r.PathValue("id"))
		case !content:
			writeJSON(w, http.StatusOK, j.status(now, r))
		case now.Before(j.due):
			writeError(w, http.StatusConflict, "invalid_request_error", "video job "+j.id+" is not completed")
		default:
			w.Header().Set("Content-Type", "video/mp4")
			_, _ = w.Write(headerMP4(j.width, j.height, j.seconds))
		}
	}
}

// headerMP4 is an MP4 of only its boxes' headers: ftyp, and a moov whose
// mvhd holds the duration and whose tkhd holds the size (no frames).
func headerMP4(w, h int, seconds float64) []byte {
	box := func(kind string, body []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
		return append(append(b, kind...), body...)
	}
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[12:], 1000)
	binary.BigEndian.PutUint32(mvhd[16:], uint32(seconds*1000))
	tkhd := make([]byte, 84)
	binary.BigEndian.PutUint32(tkhd[76:], uint32(w)<<16)
	binary.BigEndian.PutUint32(tkhd[80:], uint32(h)<<16)
	moov := box("moov", append(box("mvhd", mvhd), box("trak", box("tkhd", tkhd))...))
	return append(box("ftyp", []byte("isom\x00\x00\x02\x00isomiso2mp41")), moov...)
}
