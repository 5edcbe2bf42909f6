;;; Smoke test: Emacs eglot drives `mdseek serve` (run by tests/test_editor_eglot.py).
;; Env: MDSEEK_EGLOT_EL (the shipped lsp/editors/eglot.el, loaded unchanged),
;; WS (workspace copy), FILE (relative path to open); `mdseek' is on PATH.
(require 'eglot)
(require 'project)
;; eglot.el names markdown-mode as its requirement: use the real package when
;; installed (Debian elpa-markdown-mode), else a stand-in of the same name.
(unless (require 'markdown-mode nil t)
  (define-derived-mode markdown-mode text-mode "Markdown")
  (add-to-list 'auto-mode-alist '("\\.md\\'" . markdown-mode)))
(load (getenv "MDSEEK_EGLOT_EL") nil nil t)
(princ (format "MARKDOWN-MODE %s\n" (if (featurep 'markdown-mode) "package" "stand-in")))
(defvar smoke-ws (file-name-as-directory (getenv "WS")))
(add-hook 'project-find-functions (lambda (_dir) (cons 'transient smoke-ws)))

(defun smoke-fail (fmt &rest args)
  (princ (concat "FAIL " (apply #'format fmt args) "\n"))
  (kill-emacs 1))

(find-file (expand-file-name (getenv "FILE") smoke-ws))  ; markdown-mode-hook runs eglot-ensure
(unless (memq #'eglot-ensure markdown-mode-hook) (smoke-fail "eglot.el did not hook markdown-mode"))
(run-hooks 'post-command-hook)
(let ((deadline (+ (float-time) 90)))
  (while (and (not (eglot-current-server)) (< (float-time) deadline))
    (accept-process-output nil 0.2)))
(unless (eglot-current-server) (smoke-fail "eglot did not connect"))
(let* ((server (eglot-current-server))
       (syms nil)
       (deadline (+ (float-time) 60))
       (_ (while (and (seq-empty-p syms) (< (float-time) deadline))
            ;; the first answers can come before the folder's index is open
            (setq syms (jsonrpc-request server :workspace/symbol '(:query "promote replica")))
            (when (seq-empty-p syms) (accept-process-output nil 0.5))))
       (outline (jsonrpc-request server :textDocument/documentSymbol
                                 `(:textDocument ,(eglot--TextDocumentIdentifier)))))
  (princ (format "SYMBOLS %d\n" (length syms)))
  (seq-doseq (s syms) (princ (format "SYM %s | %s\n" (plist-get s :name) (plist-get s :containerName))))
  (princ (format "OUTLINE %d\n" (length outline)))
  (seq-doseq (s outline) (princ (format "TOP %s\n" (plist-get s :name)))))
(kill-emacs 0)
